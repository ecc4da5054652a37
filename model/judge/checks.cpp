#include "model/judge/checks.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/addresses.hpp"
#include "model/facts/text.hpp"
#include "model/judge/check_parts.hpp"
#include "model/judge/derived.hpp"
#include "model/judge/views.hpp"
#include "model/parse/parsers.hpp"

namespace zkverify {

namespace {

// Why a server that answers is not serving, as far as the others tell: beside one leader and a
// quorum it is joining, or cannot reach them. A 3.4 leader dials the address it looked the joiner's
// name up to (Java caches names for 30 s, and a joiner's retries back off to a minute), so a server
// back on a new address waits; 3.5+ servers connect back to the address the joiner announces.
// What is known of a not-serving server's id beside a serving leader: it has the leader's (it will
// never join while that leader leads), or it names none while the list has no place for it.
std::string id_evidence(const ServerRow& row, const ServerRow& leader, const Derived& derived) {
  if (row.id && row.id == leader.id)
    return fmt::format(
        ". It has server id {}, the leader's own: the leader hangs up on a server with its own id, "
        "so it waits outside, and joins as a second server {} once {} stops leading. Give it its "
        "own id before anything restarts",
        *row.id, *row.id, leader.name);
  std::set<int> members;
  for (const auto& view : derived.views)
    for (const auto& member : view.members) members.insert(member.id);
  auto listed =
      std::ranges::count_if(derived.rows, [](const ServerRow& r) { return r.state != ServerState::observer; });
  if (!row.id && !members.empty() && static_cast<std::size_t>(listed) > members.size())
    return fmt::format(
        ". {} servers are listed where the membership has {}: if {} is the one with no place in it, "
        "it runs with a listed server's id (the leader's, while it waits outside)",
        listed, members.size(), row.name);
  return "";
}

// Why a server that answers is not serving, as far as the others tell: beside one leader and a
// quorum it is joining, or cannot reach them. A 3.4 leader dials the address it looked the joiner's
// name up to (Java caches names for 30 s, and a joiner's retries back off to a minute), so a server
// back on a new address waits; 3.5+ servers connect back to the address the joiner announces.
std::string not_serving_message(const ServerRow& row, const Derived& derived) {
  const auto& name = row.name;
  if (derived.leaders.size() != 1 || derived.no_quorum)
    return fmt::format("{} is up but not serving requests: it has no quorum or is still joining", name);
  const auto& leader = derived.leaders.front();
  const auto& leader_row = *std::ranges::find(derived.rows, leader, &ServerRow::name);
  bool old_line = leader_row.version.starts_with("3.4.");
  // On a Kubernetes-shaped network a server given another's id (a wrong ID_OFFSET) never joins: its
  // peers hang up on "a server with our own ID", and it rarely answers anything that names its id.
  return fmt::format(
      "{} is up but not serving requests while the others serve with leader {}: it is still joining, cannot "
      "reach them, or has another server's id (a wrong ID_OFFSET or a copied myid; 3.5+ servers log \"We got a "
      "connection request from a server with our own ID\"){}{}",
      name, leader,
      old_line ? "; if it came back on a new address, 3.4 peers dial the one they looked its name up to (Java caches "
                 "names for 30 s, its retries back off to a minute): wait, or restart the leader (a new election); "
                 "3.5+ peers connect back to the address it announces"
               : "",
      id_evidence(row, leader_row, derived));
}

void check_servers(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    const auto& probe = facts.probes[i];
    const auto& row = derived.rows[i];
    const auto& name = probe.address.name;
    if (row.state == ServerState::unreachable) {
      // Cut off from zkverify but not from the ensemble (a network policy, a firewall, DNS on this
      // side), or down for less than the leader's patience: the leader's count cannot tell which.
      // Only where every listed server is a voter the leader counts: an extra listed host is no follower.
      bool all_voters = static_cast<int>(facts.probes.size()) <= derived.voters.voters;
      auto still_synced = derived.leader_counts_every_follower && all_voters
                              ? "; the leader still counts every other voter synced: it went down within the "
                                "leader's sync timeout (tickTime x syncLimit), or only zkverify cannot reach it"
                              : "";
      findings.add(FindingCode::unreachable, name,
                   fmt::format("{}: {}{}", server_label(name, row.address), row.error, still_synced));
    } else if (row.state == ServerState::not_serving) {
      findings.add(FindingCode::not_serving, name, not_serving_message(row, derived));
    } else if (row.state == ServerState::bad_reply) {
      findings.add(FindingCode::bad_reply, name,
                   row.error == kClosedWithoutReply
                       ? fmt::format("{} {}", name, row.error)
                       : fmt::format("{} answered srvr with something else: {}", name, row.error));
    } else if (mode_of(probe) == Mode::standalone && facts.probes.size() > 1) {
      findings.add(FindingCode::standalone, name,
                   fmt::format("{} runs standalone: it is not part of the ensemble and serves its own data", name));
    } else if (mode_of(probe) == Mode::read_only || (has_facts(probe.isro) && probe.isro->facts.read_only)) {
      findings.add(FindingCode::read_only, name, fmt::format("{} is in read-only mode: it has lost the quorum", name));
    }
  }
}

// Said when the voters did not come from a membership a server reported.
void check_voter_count(const EnsembleFacts& /*facts*/, const Derived& derived, Findings& findings) {
  const auto& count = derived.voters;
  switch (count.source) {
    case VoterSource::membership: return;
    case VoterSource::mntr:
      findings.add(FindingCode::voters_counted, "",
                   fmt::format("{}, from {}'s mntr (zk_quorum_size): no membership was available",
                               counted(count.voters, "voter"), count.mntr_server));
      return;
    case VoterSource::zoo_cfg:
      findings.add(FindingCode::voters_counted, "",
                   fmt::format("{}: the participants of the configuration --zoo-cfg read; no membership or "
                               "zk_quorum_size was available",
                               counted(count.voters, "voter")));
      return;
    case VoterSource::listed: break;
  }
  findings.add(
      FindingCode::voters_counted, "",
      fmt::format("{}: the {} listed less {}{}; no membership or zk_quorum_size was "
                  "available (unlisted voters would not be counted)",
                  counted(count.voters, "voter"), counted(count.listed, "server"), counted(count.observers, "observer"),
                  count.remembered_observers.empty() ? ""
                                                     : fmt::format(" ({} as the ledger remembers: unreachable now)",
                                                                   fmt::join(count.remembered_observers, ", "))));
}

// Ids the membership names that no listed server has.
std::vector<int> unlisted_member_ids(const Derived& derived) {
  if (!derived.membership) return {};
  std::set<int> listed;
  for (const auto& row : derived.rows)
    if (row.id) listed.insert(*row.id);
  std::vector<int> unlisted;
  for (const auto& member : derived.membership->members)
    if (!listed.contains(member.id)) unlisted.push_back(member.id);
  return unlisted;
}

void check_leaders(const EnsembleFacts& /*facts*/, const Derived& derived, Findings& findings) {
  if (derived.leaders.size() > 1) {
    findings.add(FindingCode::multiple_leaders, "",
                 fmt::format("{} servers report themselves as leader: {}", derived.leaders.size(),
                             fmt::join(derived.leaders, ", ")));
  } else if (derived.leader_unlisted) {
    // A follower serves only while it follows a leader that holds a quorum: that leader is unlisted.
    auto unlisted = unlisted_member_ids(derived);
    findings.add(FindingCode::leader_unlisted, "",
                 fmt::format("no listed server leads, but {} follow a leader: it is not among the listed servers{}",
                             fmt::join(derived.followers, ", "),
                             unlisted.empty() ? std::string(" (list every server)")
                                              : fmt::format(" (the membership names ids {} that are not listed)",
                                                            fmt::join(unlisted, ", "))));
  } else if (derived.leaders.empty()) {
    findings.add(FindingCode::no_leader, "", "no server reports itself as leader");
  }
}

// Too few serving voters for a quorum. With an estimated voter count, a committed write is the
// stronger evidence: a quorum acknowledged it, so the estimate is what is wrong (an unreachable
// server was an observer), and the verdict is degraded, not critical.
void check_quorum(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  if (derived.voters_uncertain) {
    findings.add(FindingCode::voters_uncertain, "",
                 fmt::format("{} of an estimated {} serve, short of the {} a quorum of them needs, yet the write "
                             "through {} was committed, which only a quorum does: the estimate is wrong, so the "
                             "quorum holds but how close it is to being lost is not known (whitelist conf or mntr, "
                             "or give --admin-port)",
                             derived.serving_voters, counted(derived.voters.voters, "voter"), derived.majority,
                             facts.round_trip->writer));
  } else if (derived.no_quorum) {
    findings.add(FindingCode::no_quorum, "",
                 fmt::format("{} of {} voters are serving; a quorum needs {}", derived.serving_voters,
                             derived.voters.voters, derived.majority));
  }
}

// "pzoo-0, pzoo-1 hold version 100000000 (5 voters: ids 1, 2, 3, 4, 5)".
std::string view_words(const MembershipView& view) {
  auto voters = view.voters();
  return fmt::format("{} {}{} ({}: ids {}{})", fmt::join(view.holders, ", "),
                     view.holders.size() == 1 ? "holds" : "hold",
                     view.version ? fmt::format(" version {:x}", *view.version) : std::string(" a list"),
                     counted(static_cast<int>(voters.size()), "voter"), fmt::join(voters, ", "),
                     view.given.empty() ? "" : fmt::format("; by --zoo-cfg for {}", fmt::join(view.given, ", ")));
}

// Versions other than 0 are the zxids of committed reconfigs (a static list reports 0). Each was
// committed by a quorum of the list before it, so the holders of an older list are fewer than a
// majority of it and cannot elect alone: they are behind, not a second ensemble.
bool reconfig_history(const std::vector<MembershipView>& views) {
  std::set<std::int64_t> versions;
  for (const auto& view : views)
    if (view.version.value_or(0) != 0) versions.insert(*view.version);
  return versions.size() == views.size();  // one list per version: two lists under one are not a history
}

void check_config_behind(const std::vector<MembershipView>& views, Findings& findings) {
  const auto& newest = *std::ranges::max_element(views, {}, [](const MembershipView& view) { return *view.version; });
  for (const auto& view : views)
    if (&view != &newest)
      findings.add(FindingCode::config_behind, view.holders.front(),
                   fmt::format("{}; the newest, {}: a reconfig not applied there yet (a server applies it when it "
                               "syncs with the leader)",
                               view_words(view), view_words(newest)));
}

// Views whose majorities can be disjoint can elect two leaders: critical, with the witness. Other
// views are a change in progress (info), or the same voters with other addresses or roles (warning);
// after a reconfig, servers behind it (warning).
void check_membership_views(const EnsembleFacts& /*facts*/, const Derived& derived, Findings& findings) {
  const auto& views = derived.views;
  if (views.size() < 2) return;
  if (reconfig_history(views)) return check_config_behind(views, findings);
  for (std::size_t i = 0; i < views.size(); ++i)
    for (std::size_t j = i + 1; j < views.size(); ++j)
      if (auto witness = disjoint_majorities(views[i].voters(), views[j].voters())) {
        findings.add(FindingCode::split_brain_possible, "",
                     fmt::format("two leaders can be elected: {}, and {}; a majority of the first (ids {}) and one "
                                 "of the second (ids {}) share no server. Restart no server onto the other list; "
                                 "change the membership one server at a time",
                                 view_words(views[i]), view_words(views[j]), fmt::join(witness->first, ", "),
                                 fmt::join(witness->second, ", ")));
        return;
      }
  bool same_voters =
      std::ranges::all_of(views, [&](const MembershipView& view) { return view.voters() == views.front().voters(); });
  std::vector<std::string> groups;
  for (const auto& view : views) groups.push_back(view_words(view));
  if (same_voters)
    findings.add(FindingCode::membership_mismatch, "",
                 fmt::format("servers disagree on the members' addresses or roles: {}", fmt::join(groups, "; ")));
  else
    findings.add(FindingCode::membership_changing, "",
                 fmt::format("a membership change is in progress, its lists' majorities always meet (one leader at "
                             "a time): {}",
                             fmt::join(groups, "; ")));
}

void check_synced_followers(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  if (derived.leaders.size() != 1) return;
  const auto& leader = *std::ranges::find(facts.probes, derived.leaders.front(),
                                          [](const ServerProbe& probe) { return probe.address.name; });
  if (!has_facts(leader.mntr) || !leader.mntr->facts.synced_followers) return;
  auto synced = *leader.mntr->facts.synced_followers;
  auto expected = derived.voters.voters - 1;
  if (synced < expected)
    findings.add(FindingCode::followers_not_synced, leader.address.name,
                 fmt::format("leader {} has {}; the ensemble has {}", leader.address.name,
                             counted(synced, "synced follower"), counted(expected, "other voter")));
}

// After the write every server that serves must have reached it (the round trip's reads check
// that) and so be on the write's epoch. Without one, followers may lag right after an election.
void check_epochs(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  const auto& trip = facts.round_trip;
  if (trip && trip->write_zxid) {
    for (const auto& row : derived.rows)
      if (row.zxid && row.zxid->epoch() != trip->write_zxid->epoch() && row.state != ServerState::unreachable)
        findings.add(FindingCode::epoch_mismatch, row.name,
                     fmt::format("{} is on epoch {} but the ensemble wrote in epoch {}", row.name, row.zxid->epoch(),
                                 trip->write_zxid->epoch()));
    return;
  }
  std::set<std::uint32_t> epochs;
  for (const auto& probe : facts.probes)
    if (auto mode = mode_of(probe); mode && is_serving(*mode)) epochs.insert(probe.srvr->facts.zxid.epoch());
  if (epochs.size() > 1)
    findings.add(Severity::info, FindingCode::epoch_mismatch, "",
                 fmt::format("servers report epochs {}; right after an election followers lag until the first "
                             "write, so only the round trip (without --no-write) can tell",
                             fmt::join(epochs, ", ")));
  auto leader_mntr = [&](const ServerProbe& probe) {
    return mode_of(probe) == Mode::leader && has_facts(probe.mntr) && probe.mntr->facts.synced_followers;
  };
  if (derived.leaders.size() == 1 && std::ranges::none_of(facts.probes, leader_mntr))
    findings.add(FindingCode::sync_unverified, "",
                 "follower sync not verified: neither the leader's mntr nor a round trip was available");
}

}  // namespace

void Findings::add(FindingCode code, std::string server, std::string message) {
  list.push_back(make_finding(code, std::move(server), std::move(message)));
}

void Findings::add(Severity severity, FindingCode code, std::string server, std::string message) {
  list.push_back({severity, code, std::move(server), std::move(message)});
}

std::string whitelist_line(const std::vector<std::string>& words) {
  std::vector<std::string> all{"srvr", "ruok"};
  for (const auto& word : kOptionalWords)
    if (std::ranges::find(all, word) == all.end()) all.push_back(word);
  for (const auto& word : words)
    if (std::ranges::find(all, word) == all.end()) all.push_back(word);
  return fmt::format("4lw.commands.whitelist={}", fmt::join(all, ","));
}

// Independent of each other; this order is only the order in which findings of one severity print.
std::span<const Check> ensemble_checks() {
  static constexpr Check checks[] = {
      check_servers, check_voter_count,      check_leaders,  check_quorum,       check_membership_views,
      check_ids,     check_synced_followers, check_epochs,   check_access,       check_round_trip,
      check_clients, check_capabilities,     check_versions, check_certificates, check_kerberos,
  };
  return checks;
}

Report judge(const EnsembleFacts& facts) {
  auto derived = derive(facts);
  Findings findings;
  for (auto check : ensemble_checks()) check(facts, derived, findings);
  Report report;
  report.leader = derived.leaders.size() == 1 ? std::optional(derived.leaders.front()) : std::nullopt;
  report.expected_voters = derived.voters.voters;
  report.serving_voters = derived.serving_voters;
  report.membership_reported = derived.membership != nullptr;
  for (const auto& view : derived.views) {
    ViewSummary summary{view.version, {}, {}, view.holders, view.given};
    auto voters = view.voters();
    summary.voters.assign(voters.begin(), voters.end());
    for (const auto& member : view.members)
      if (!voters.contains(member.id)) summary.observers.push_back(member.id);
    report.membership_views.push_back(std::move(summary));
  }
  report.voters_uncertain = derived.voters_uncertain;
  report.round_trip = round_trip_summary(facts, derived);
  if (facts.round_trip && !facts.round_trip->clients.empty()) report.clients = facts.round_trip->clients;
  report.tls = client_tls(facts);
  report.servers = std::move(derived.rows);
  report.findings = std::move(findings.list);
  finalize(report);
  return report;
}

void finalize(Report& report) {
  // Worst first: at 3 a.m. the first line of the findings is the one that is read.
  std::ranges::stable_sort(report.findings, std::greater{}, &Finding::severity);
  report.verdict = Verdict::healthy;
  for (const auto& finding : report.findings) {
    if (finding.severity == Severity::critical) report.verdict = Verdict::critical;
    else if (finding.severity == Severity::warning && report.verdict == Verdict::healthy)
      report.verdict = Verdict::degraded;
  }
}

}  // namespace zkverify
