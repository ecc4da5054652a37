#include "model/judge/checks.hpp"
#include "model/facts/addresses.hpp"
#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/parse/parsers.hpp"

namespace zkverify {

namespace {

bool is_serving(const ServerProbe& probe) {
  auto mode = mode_of(probe);
  return mode && is_serving(*mode);
}

bool is_serving_voter(const ServerProbe& probe) {
  auto mode = mode_of(probe);
  return mode && is_serving_voter(*mode);
}

// What a server's srvr exchange says of it; the row's error says why when it says nothing.
void describe_srvr(const ServerProbe& probe, ServerRow& row) {
  if (probe.srvr_exchange.error != ProbeError::ok) {
    row.state = ServerState::unreachable;
    row.error = describe(probe.srvr_exchange);
    return;
  }
  row.latency_ms = static_cast<double>(probe.srvr_exchange.latency.count()) / 1000.0;
  const auto& srvr = *probe.srvr;
  if (srvr.ok()) {
    row.state = state_of(srvr.facts.mode);
    row.zxid = srvr.facts.zxid;
    row.node_count = srvr.facts.node_count;
    row.version = release_of(srvr.facts.version);
    row.packets_received = srvr.facts.received;
  } else if (srvr.error == ProbeError::not_serving) {
    row.state = ServerState::not_serving;
    row.error = "not currently serving requests";
  } else {  // srvr cannot be disabled in 3.8, but an old server may refuse it
    row.state = ServerState::bad_reply;
    row.error = srvr.error == ProbeError::malformed ? srvr.detail : "srvr refused (not whitelisted)";
  }
}

class Judge {
 public:
  explicit Judge(const EnsembleFacts& facts) : facts_(facts) {}

  Report run() {
    build_rows();
    check_servers();
    check_leaders_and_quorum();
    check_membership();
    check_sync();
    check_access();
    check_round_trip();
    check_capabilities();
    check_versions();
    check_certificates();
    finalize(report_);
    return std::move(report_);
  }

 private:
  void add(FindingCode code, std::string server, std::string message) {
    report_.findings.push_back(make_finding(code, std::move(server), std::move(message)));
  }
  void add(Severity severity, FindingCode code, std::string server, std::string message) {
    report_.findings.push_back({severity, code, std::move(server), std::move(message)});
  }

  const ReadBack* read_of(const std::string& name) const {
    if (!facts_.round_trip) return nullptr;
    for (const auto& read : facts_.round_trip->reads)
      if (read.server == name) return &read;
    return nullptr;
  }

  void build_rows() {
    for (const auto& probe : facts_.probes) {
      ServerRow row;
      row.name = probe.address.name;
      row.address = probe.address.endpoint();
      if (has_facts(probe.conf) && probe.conf->facts.server_id) row.id = probe.conf->facts.server_id;
      const auto* read = read_of(probe.address.name);
      if (!row.id && read && read->session_server_id) row.id = read->session_server_id;

      describe_srvr(probe, row);
      if (facts_.tls && probe.srvr_exchange.certificate) {
        row.certificate = probe.srvr_exchange.certificate;
        row.certificate_days_left = days_left(*row.certificate, facts_.tls->now);
      }
      if (read && read->read_mzxid && (!row.zxid || *row.zxid < *read->read_mzxid)) row.zxid = read->read_mzxid;
      if (read && facts_.round_trip->write_zxid) row.read_back = read->error == ZkError::ok && read->bytes_match;
      if (has_facts(probe.ruok) && row.state == ServerState::not_serving)
        row.note = "ruok says imok, but it is not serving";
      report_.servers.push_back(std::move(row));
    }
  }

  void check_servers() {
    for (std::size_t i = 0; i < facts_.probes.size(); ++i) {
      const auto& probe = facts_.probes[i];
      const auto& row = report_.servers[i];
      const auto& name = probe.address.name;
      if (row.state == ServerState::unreachable) {
        add(FindingCode::unreachable, name, fmt::format("{}: {}", server_label(name, row.address), row.error));
      } else if (row.state == ServerState::not_serving) {
        add(FindingCode::not_serving, name,
            fmt::format("{} is up but not serving requests: it has no quorum or is still joining", name));
      } else if (row.state == ServerState::bad_reply) {
        add(FindingCode::bad_reply, name,
            row.error == kClosedWithoutReply
                ? fmt::format("{} {}", name, row.error)
                : fmt::format("{} answered srvr with something else: {}", name, row.error));
      } else if (mode_of(probe) == Mode::standalone && facts_.probes.size() > 1) {
        add(FindingCode::standalone, name,
            fmt::format("{} runs standalone: it is not part of the ensemble and serves its own data", name));
      } else if (mode_of(probe) == Mode::read_only || (has_facts(probe.isro) && probe.isro->facts.read_only)) {
        add(FindingCode::read_only, name, fmt::format("{} is in read-only mode: it has lost the quorum", name));
      }
    }
  }

  // The membership a server reports (conf, or the AdminServer's voting_view), if any does.
  const ConfFacts* membership() const {
    for (const auto& probe : facts_.probes)
      if (has_facts(probe.conf) && !probe.conf->facts.members.empty()) return &probe.conf->facts;
    return nullptr;
  }

  // The participants of the zoo.cfg that listed the servers (--zoo-cfg), when one did.
  std::optional<int> configured_voters() const {
    auto configured = [](const ServerProbe& probe) { return probe.address.observer.has_value(); };
    if (facts_.probes.empty() || !std::ranges::all_of(facts_.probes, configured)) return std::nullopt;
    return static_cast<int>(
        std::ranges::count_if(facts_.probes, [](const ServerProbe& probe) { return !*probe.address.observer; }));
  }

  // Voters the ensemble is configured with: the participants of the reported membership; else
  // mntr's zk_quorum_size; else the participants of the zoo.cfg that listed the servers
  // (--zoo-cfg); else the listed servers less those srvr says are observers. The last three come
  // from elsewhere than the servers' own membership, and an info finding says which was used.
  int expected_voters() {
    if (const auto* conf = membership())
      return conf->voters_only
                 ? static_cast<int>(conf->members.size())
                 : static_cast<int>(std::ranges::count(conf->members, std::string("participant"), &Member::role));
    for (const auto& probe : facts_.probes)
      if (has_facts(probe.mntr) && probe.mntr->facts.quorum_size) {
        add(FindingCode::voters_counted, "",
            fmt::format("{}, from {}'s mntr (zk_quorum_size): no membership was available",
                        counted(*probe.mntr->facts.quorum_size, "voter"), probe.address.name));
        return static_cast<int>(*probe.mntr->facts.quorum_size);
      }
    if (auto voters = configured_voters()) {
      add(FindingCode::voters_counted, "",
          fmt::format("{}: the participants of the configuration --zoo-cfg read; no membership or zk_quorum_size "
                      "was available",
                      counted(*voters, "voter")));
      return *voters;
    }
    voters_inferred_ = true;
    std::vector<std::string> remembered;  // unreachable now, observers when last seen
    auto observers = std::ranges::count_if(facts_.probes, [&](const ServerProbe& probe) {
      if (mode_of(probe) == Mode::observer) return true;
      if (mode_of(probe) || !facts_.remembered_observers.contains(probe.address.name)) return false;
      remembered.push_back(probe.address.name);
      return true;
    });
    auto voters = static_cast<int>(facts_.probes.size() - static_cast<std::size_t>(observers));
    add(FindingCode::voters_counted, "",
        fmt::format("{}: the {} listed less {}{}; no membership or zk_quorum_size was "
                    "available (unlisted voters would not be counted)",
                    counted(voters, "voter"), counted(static_cast<long long>(facts_.probes.size()), "server"),
                    counted(observers, "observer"),
                    remembered.empty()
                        ? ""
                        : fmt::format(" ({} as the ledger remembers: unreachable now)", fmt::join(remembered, ", "))));
    return voters;
  }

  // The round trip's write was committed: the leader had a quorum of voters acknowledge it.
  bool write_committed() const {
    return facts_.round_trip && facts_.round_trip->write_error == ZkError::ok && facts_.round_trip->write_zxid;
  }

  // Too few serving voters for a quorum. With an estimated voter count, a committed write is the
  // stronger evidence: a quorum acknowledged it, so the estimate is what is wrong (an unreachable
  // server was an observer), and the verdict is degraded, not critical.
  void check_quorum(int majority) {
    if (report_.serving_voters >= majority) return;
    if (voters_inferred_ && write_committed()) {
      report_.voters_uncertain = true;
      add(FindingCode::voters_uncertain, "",
          fmt::format("{} of an estimated {} serve, short of the {} a quorum of them needs, yet the write through {} "
                      "was committed, which only a quorum does: the estimate is wrong, so the quorum holds but how "
                      "close it is to being lost is not known (whitelist conf or mntr, or give --admin-port)",
                      report_.serving_voters, counted(report_.expected_voters, "voter"), majority,
                      facts_.round_trip->writer));
      return;
    }
    add(FindingCode::no_quorum, "",
        fmt::format("{} of {} voters are serving; a quorum needs {}", report_.serving_voters, report_.expected_voters,
                    majority));
  }

  // Ids the membership names that no listed server has.
  std::vector<int> unlisted_member_ids() const {
    const auto* conf = membership();
    if (!conf) return {};
    std::set<int> listed;
    for (const auto& row : report_.servers)
      if (row.id) listed.insert(*row.id);
    std::vector<int> unlisted;
    for (const auto& member : conf->members)
      if (!listed.contains(member.id)) unlisted.push_back(member.id);
    return unlisted;
  }

  void check_leaders_and_quorum() {
    std::vector<std::string> leaders, followers;
    for (const auto& probe : facts_.probes) {
      if (mode_of(probe) == Mode::leader) leaders.push_back(probe.address.name);
      if (mode_of(probe) == Mode::follower) followers.push_back(probe.address.name);
    }
    report_.expected_voters = expected_voters();
    report_.membership_reported = membership() != nullptr;
    report_.serving_voters = static_cast<int>(std::ranges::count_if(facts_.probes, is_serving_voter));
    int majority = report_.expected_voters / 2 + 1;

    if (leaders.size() == 1) {
      report_.leader = leaders.front();
    } else if (leaders.size() > 1) {
      add(FindingCode::multiple_leaders, "",
          fmt::format("{} servers report themselves as leader: {}", leaders.size(), fmt::join(leaders, ", ")));
    } else if (!followers.empty()) {
      // A follower serves only while it follows a leader that holds a quorum: that leader is unlisted.
      auto unlisted = unlisted_member_ids();
      add(FindingCode::leader_unlisted, "",
          fmt::format("no listed server leads, but {} follow a leader: it is not among the listed servers{}",
                      fmt::join(followers, ", "),
                      unlisted.empty() ? std::string(" (list every server)")
                                       : fmt::format(" (the membership names ids {} that are not listed)",
                                                     fmt::join(unlisted, ", "))));
      return;  // the quorum is the unlisted leader's: the listed servers alone cannot count it
    } else {
      add(FindingCode::no_leader, "", "no server reports itself as leader");
    }

    check_quorum(majority);
  }

  void check_membership() {
    std::map<std::vector<MemberIdentity>, std::vector<std::string>> views;
    for (const auto& probe : facts_.probes) {
      if (!has_facts(probe.conf) || probe.conf->facts.members.empty()) continue;
      std::vector<MemberIdentity> view;
      for (const auto& member : probe.conf->facts.members) view.push_back(identity_of(member));
      views[view].push_back(probe.address.name);
    }
    if (views.size() > 1) {
      std::vector<std::string> groups;
      for (const auto& [members, names] : views)
        groups.push_back(fmt::format("{} see {} members", fmt::join(names, ","), members.size()));
      add(FindingCode::membership_mismatch, "",
          fmt::format("servers disagree on the ensemble's membership: {}", fmt::join(groups, "; ")));
    }

    std::map<int, std::vector<std::string>> names_by_id;
    for (const auto& row : report_.servers)
      if (row.id) names_by_id[*row.id].push_back(row.name);
    for (const auto& [id, names] : names_by_id)
      if (names.size() > 1)
        add(FindingCode::duplicate_id, "",
            fmt::format("server id {} is reported by {}: two servers with one id, or one server listed twice", id,
                        fmt::join(names, " and ")));

    if (views.empty()) return;
    const auto& members = views.rbegin()->first;  // any view: a mismatch is reported above
    std::set<int> member_ids, listed_ids;
    for (const auto& member : members) member_ids.insert(member.id);
    bool voters_only = membership()->voters_only;
    for (const auto& [id, names] : names_by_id) {
      listed_ids.insert(id);
      auto row = std::ranges::find(report_.servers, names.front(), &ServerRow::name);
      if (voters_only && row->state == ServerState::observer) continue;  // voting_view lists no observers
      if (!member_ids.contains(id))
        add(FindingCode::membership_unknown, names.front(),
            fmt::format("{} has server id {}, which is not in the ensemble's membership", names.front(), id));
    }
    std::vector<int> unlisted;
    for (int id : member_ids)
      if (!listed_ids.contains(id)) unlisted.push_back(id);
    bool all_ids_known = listed_ids.size() == facts_.probes.size();
    if (!unlisted.empty() && all_ids_known)
      add(FindingCode::membership_unlisted, "",
          fmt::format("the membership has {} servers but {} are listed; ids not listed: {}", members.size(),
                      facts_.probes.size(), fmt::join(unlisted, ", ")));
  }

  void check_sync() {
    const ServerProbe* leader = nullptr;
    for (const auto& probe : facts_.probes)
      if (report_.leader && probe.address.name == *report_.leader) leader = &probe;
    bool checked_by_mntr = false;
    bool mntr_counts_every_follower = false;
    if (leader && has_facts(leader->mntr) && leader->mntr->facts.synced_followers) {
      checked_by_mntr = true;
      auto synced = *leader->mntr->facts.synced_followers;
      auto expected = report_.expected_voters - 1;
      mntr_counts_every_follower = synced >= expected;
      if (synced < expected)
        add(FindingCode::followers_not_synced, leader->address.name,
            fmt::format("leader {} has {}; the ensemble has {}", leader->address.name,
                        counted(synced, "synced follower"), counted(expected, "other voter")));
      for (auto& row : report_.servers)
        if (row.name == leader->address.name) row.note = fmt::format("synced followers {}/{}", synced, expected);
    }

    for (auto& row : report_.servers) row.synced = proven_synced(row, mntr_counts_every_follower);

    const auto& trip = facts_.round_trip;
    if (trip && trip->write_zxid) {
      // After the write every server that serves must have reached it (the round trip reads check that)
      // and so be on the write's epoch.
      for (const auto& row : report_.servers)
        if (row.zxid && row.zxid->epoch() != trip->write_zxid->epoch() && row.state != ServerState::unreachable)
          add(FindingCode::epoch_mismatch, row.name,
              fmt::format("{} is on epoch {} but the ensemble wrote in epoch {}", row.name, row.zxid->epoch(),
                          trip->write_zxid->epoch()));
      return;
    }
    std::set<std::uint32_t> epochs;
    for (const auto& probe : facts_.probes)
      if (is_serving(probe)) epochs.insert(probe.srvr->facts.zxid.epoch());
    if (epochs.size() > 1)
      add(Severity::info, FindingCode::epoch_mismatch, "",
          fmt::format("servers report epochs {}; right after an election followers lag until the first write, so only "
                      "the round trip (without --no-write) can tell",
                      fmt::join(epochs, ", ")));
    if (!checked_by_mntr && report_.leader)
      add(FindingCode::sync_unverified, "",
          "follower sync not verified: neither the leader's mntr nor a round trip was available");
  }

  static std::optional<bool> proven_synced(const ServerRow& row, bool mntr_counts_every_follower) {
    if (row.state == ServerState::leader) return true;
    if (!is_serving(row.state)) return false;
    if (row.read_back) return row.read_back;
    if (row.state == ServerState::follower && mntr_counts_every_follower) return true;
    return std::nullopt;
  }

  // Mid-upgrade, servers run different versions: expected, and worth a line.
  void check_versions() {
    std::map<std::string, std::vector<std::string>> servers_by_version;
    for (const auto& probe : facts_.probes)
      if (has_facts(probe.srvr) && !probe.srvr->facts.version.empty())
        servers_by_version[release_of(probe.srvr->facts.version)].push_back(probe.address.name);
    if (servers_by_version.size() < 2) return;
    std::vector<std::string> parts;
    for (const auto& [version, names] : servers_by_version)
      parts.push_back(fmt::format("{} on {}", version, fmt::join(names, ", ")));
    add(FindingCode::mixed_versions, "",
        fmt::format("servers run different ZooKeeper versions (expected during an upgrade): {}",
                    fmt::join(parts, "; ")));
  }

  // An expiring certificate in the middle of an upgrade is an outage waiting: the servers' (an expired
  // one already failed its handshake: unreachable says so), and zkverify's own.
  void check_certificates() {
    if (!facts_.tls) return;
    const auto& tls = *facts_.tls;
    auto expiring = [&](const CertificateFacts& certificate) {
      return certificate.not_after - tls.now < tls.expiry_warning;
    };
    for (const auto& row : report_.servers)
      if (row.certificate && expiring(*row.certificate) && row.certificate->not_after > tls.now)
        add(FindingCode::tls_cert_expiring, row.name,
            fmt::format("{}'s certificate ({}) expires on {}, in {}", row.name, row.certificate->subject,
                        iso8601(row.certificate->not_after), counted(row.certificate_days_left, "day")));
    report_.tls = ClientTls{tls.client_certificate, 0};
    if (!tls.client_certificate) return;
    const auto& own = *tls.client_certificate;
    report_.tls->days_left = days_left(own, tls.now);
    if (!expiring(own)) return;
    add(FindingCode::tls_cert_expiring, "",
        own.not_after <= tls.now
            ? fmt::format("zkverify's client certificate ({}, --tls-cert) expired on {}: the servers refuse it",
                          own.subject, iso8601(own.not_after))
            : fmt::format("zkverify's client certificate ({}, --tls-cert) expires on {}, in {}", own.subject,
                          iso8601(own.not_after), counted(report_.tls->days_left, "day")));
  }

  void check_round_trip() {
    if (facts_.write_skipped) {  // a marker-only trip may have run: the ledger judges its reads
      add(FindingCode::write_skipped, "", "round trip skipped (--no-write): no znode written");
      return;
    }
    if (!facts_.round_trip) {
      add(FindingCode::round_trip_failed, "", "no round trip: no server is serving");
      return;
    }
    const auto& trip = *facts_.round_trip;
    auto& summary = report_.round_trip.emplace();
    summary.writer = trip.writer;
    summary.path = trip.path;
    summary.write_zxid = trip.write_zxid;
    if (access_refused_) return;  // check_access said why, once

    if (write_only_slow(trip)) return;
    if (trip.namespace_error != ZkError::ok && trip.namespace_error != ZkError::not_attempted) {
      auto hint = trip.namespace_error == ZkError::no_node
                      ? " (its parent does not exist; create it or pick another --namespace)"
                      : "";
      add(FindingCode::round_trip_failed, trip.writer,
          fmt::format("could not create the namespace node through {}: {}{}", trip.writer,
                      to_string(trip.namespace_error), hint));
      return;
    }
    if (trip.write_error != ZkError::ok) {
      add(FindingCode::round_trip_failed, trip.writer,
          fmt::format("write through {} failed: {}", trip.writer, to_string(trip.write_error)));
      return;
    }
    for (const auto& read : trip.reads) {
      ++summary.reads_attempted;
      if (read.error != ZkError::ok)
        add(FindingCode::round_trip_failed, read.server,
            fmt::format("reading the write back through {} after sync failed: {}", read.server, to_string(read.error)));
      else if (!read.bytes_match)
        add(FindingCode::stale_read, read.server,
            fmt::format("{} returned other bytes for {} than were written", read.server, trip.path));
      else ++summary.reads_ok;
    }
    if (trip.removal_error != ZkError::ok)
      add(FindingCode::cleanup_deferred, trip.writer,
          fmt::format("{} was not removed ({}); it is ephemeral and goes when {} ends or expires the session "
                      "that wrote it",
                      trip.path, to_string(trip.removal_error), trip.writer));
  }

  // A write that ran out of time (no error from a server) while srvr shows one leader and a serving
  // quorum: followers follow only a leader a quorum elected, so the quorum is there but did not
  // commit in time (the first write of a fresh ensemble on a cold disk, a loaded leader). Not safe
  // to go on (degraded), but not the outage a refused write or a lost quorum is (critical).
  bool write_only_slow(const RoundTrip& trip) {
    bool timed_out =
        trip.namespace_error == ZkError::deadline_exceeded || trip.write_error == ZkError::deadline_exceeded;
    if (!timed_out || !report_.leader || has_finding(report_.findings, FindingCode::no_quorum)) return false;
    add(FindingCode::write_timed_out, trip.writer,
        fmt::format("the write through {} was not committed within the deadline, though {} leads and {} of {} "
                    "voters serve: the quorum may only be slow (a cold disk, a loaded leader); rerun with a longer "
                    "--timeout",
                    trip.writer, *report_.leader, report_.serving_voters, report_.expected_voters));
    return true;
  }

  void check_capabilities() {
    std::map<std::string, std::vector<std::string>> refused;  // word -> servers
    for (const auto& probe : facts_.probes) {
      for (const auto& word : probe.refused_words) refused[word].push_back(probe.address.name);
      if (!probe.admin_error.empty()) add(FindingCode::admin_unavailable, probe.address.name, probe.admin_error);
    }
    if (refused.empty()) return;
    std::vector<std::string> words, parts;
    for (const auto& [word, names] : refused) {
      words.push_back(word);
      parts.push_back(fmt::format("{} on {}", word, fmt::join(names, ",")));
    }
    add(FindingCode::not_whitelisted, "",
        fmt::format("not whitelisted: {}; zkverify used srvr instead. To enable them, add this line to each "
                    "server's zoo.cfg: {}{}",
                    fmt::join(parts, "; "), whitelist_line(words), upgrade_hint()));
  }

  // Mid-upgrade from 3.4: its servers answered every word without a whitelist (3.4.10+ reads the
  // line too, so it is safe on both), while 3.5 and later answer only srvr until zoo.cfg lists them.
  std::string upgrade_hint() const {
    auto answered_on_34 = [](const ServerProbe& probe) {
      return has_facts(probe.srvr) && probe.srvr->facts.version.starts_with("3.4.") && probe.refused_words.empty();
    };
    if (std::ranges::none_of(facts_.probes, answered_on_34)) return {};
    return " (the 3.4 servers answered these words without it; 3.5 and later answer only srvr until the line is in "
           "their zoo.cfg)";
  }

  // Digest ACLs: a namespace the sessions may not use is one critical finding of its own (reported
  // instead of the round trip's failures): auth-required without credentials, auth-failed with
  // credentials the servers refused (AUTHFAILED) or the ACL does not grant.
  void check_access() {
    if (!facts_.round_trip) return;
    const auto& trip = *facts_.round_trip;
    if (auto refused = refused_sessions(trip); !refused.empty()) {
      access_refused_ = true;
      add(FindingCode::auth_failed, refused.size() == 1 ? refused.front() : "",
          fmt::format("the servers refused the credentials from --auth-file (AUTHFAILED) on {}: check the file's "
                      "USER and PASSWORD and the servers' authentication providers",
                      fmt::join(refused, ", ")));
      return;
    }
    if (trip.denied_path.empty()) return;
    access_refused_ = true;
    if (trip.credentials_given)
      add(FindingCode::auth_failed, trip.writer,
          fmt::format("the credentials from --auth-file may not use the namespace {}: the ACL of {} ({}) refused "
                      "them (no_auth); check the file's USER and PASSWORD, or the ACL",
                      trip.namespace_path, trip.denied_path, describe_acl(trip)));
    else
      add(FindingCode::auth_required, trip.writer,
          fmt::format("the namespace {} is protected by an ACL: the ACL of {} ({}) refused a session without "
                      "credentials (no_auth); pass --auth-file FILE (one line digest:USER:PASSWORD) or set "
                      "ZKVERIFY_AUTH_FILE",
                      trip.namespace_path, trip.denied_path, describe_acl(trip)));
  }

  // The servers whose sessions ended refused (AUTHFAILED): the writer's, then the readers'.
  static std::vector<std::string> refused_sessions(const RoundTrip& trip) {
    std::vector<std::string> refused;
    if (trip.write_error == ZkError::auth_failed) refused.push_back(trip.writer);
    for (const auto& read : trip.reads)
      if ((read.error == ZkError::auth_failed || read.marker_error == ZkError::auth_failed) &&
          std::ranges::find(refused, read.server) == refused.end())
        refused.push_back(read.server);
    return refused;
  }

  // "scheme digest", "schemes digest, world", or why the ACL could not be read.
  static std::string describe_acl(const RoundTrip& trip) {
    if (trip.acl_error == ZkError::ok && !trip.acl_schemes.empty())
      return fmt::format("{} {}", trip.acl_schemes.size() == 1 ? "scheme" : "schemes",
                         fmt::join(trip.acl_schemes, ", "));
    if (trip.acl_error == ZkError::no_auth) return "scheme unknown: the ACL itself is not readable without permission";
    return fmt::format("scheme unknown: reading the ACL failed: {}", to_string(trip.acl_error));
  }

  const EnsembleFacts& facts_;
  Report report_;
  bool voters_inferred_ = false;  // expected_voters() estimated them: no membership, no zk_quorum_size
  bool access_refused_ = false;   // check_access reported why the round trip could not write
};

}  // namespace

std::string whitelist_line(const std::vector<std::string>& words) {
  std::vector<std::string> all{"srvr", "ruok"};
  for (const auto& word : kOptionalWords)
    if (std::ranges::find(all, word) == all.end()) all.push_back(word);
  for (const auto& word : words)
    if (std::ranges::find(all, word) == all.end()) all.push_back(word);
  return fmt::format("4lw.commands.whitelist={}", fmt::join(all, ","));
}

Report judge(const EnsembleFacts& facts) { return Judge(facts).run(); }

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
