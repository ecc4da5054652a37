#include "model/judge/ledger_update.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/judge/client_changes.hpp"
#include "model/judge/ledger_steps.hpp"
#include "model/judge/restart_round.hpp"
#include "model/parse/parsers.hpp"

namespace zkverify {

namespace {

// Below this many znodes, halving says little (zkverify's own watch adds a dozen); the zxid and the
// marker catch data loss in small ensembles.
constexpr std::int64_t kNodeCountFloor = 100;

std::string zxid_text(Zxid zxid) { return fmt::format("{} (epoch {})", zxid_hex(zxid), zxid.epoch()); }

std::vector<std::string> membership_of(const EnsembleFacts& facts) {
  for (const auto& probe : facts.probes) {
    if (!has_facts(probe.conf) || probe.conf->facts.members.empty()) continue;
    std::vector<std::string> lines;
    for (const auto& m : probe.conf->facts.members)
      lines.push_back(fmt::format("server.{}={}:{}:{};{}", m.id, m.quorum_address,
                                  m.election_address.substr(m.election_address.rfind(':') + 1), m.role,
                                  m.client_address));
    std::ranges::sort(lines);  // set_difference needs them sorted
    return lines;
  }
  return {};
}

}  // namespace

namespace {

void add(LedgerDraft& draft, FindingCode code, std::string server, std::string message) {
  draft.out.findings.push_back(make_finding(code, std::move(server), std::move(message)));
}

// A loss seen this run: a data-loss finding, and a candidate for the ledger's sticky record (the
// candidate of the lowest rank is kept, so which step saw it first does not matter).
void record_loss(LedgerDraft& draft, int rank, const std::string& message) {
  add(draft, FindingCode::data_loss, "", message);
  draft.losses.emplace_back(rank, message);
}

void carry_data_loss_alarm(const LedgerRun& run, LedgerDraft& draft) {
  if (run.previous && run.previous->data_loss)
    add(draft, FindingCode::data_loss, "",
        fmt::format("data loss was detected at {}: {}. This stays critical until --reset-state",
                    run.previous->data_loss->detected, run.previous->data_loss->message));
}

// The ensemble's zxid: the highest any serving server showed (after the write, when there was one).
void check_zxid(const LedgerRun& run, LedgerDraft& draft) {
  std::optional<Zxid> current;
  for (const auto& row : run.report.servers)
    if (row.zxid && is_serving(row.state) && (!current || *current < *row.zxid)) current = row.zxid;
  if (!current || !run.report.leader) return;
  const auto& previous = run.previous;
  if (previous && *current < previous->high_zxid && !previous->data_loss)
    record_loss(draft, 0,
                fmt::format("the ensemble's zxid went backwards: {} was seen before, now the highest is {}",
                            zxid_text(previous->high_zxid), zxid_text(*current)));
  else if (previous && current->epoch() > previous->high_zxid.epoch())
    add(draft, FindingCode::epoch_changed, "",
        fmt::format("epoch {} -> {}: a leader was elected since the last run", previous->high_zxid.epoch(),
                    current->epoch()));
  draft.out.next.high_zxid = std::max(draft.out.next.high_zxid, *current);
}

void check_leader(const LedgerRun& run, LedgerDraft& draft) {
  if (!run.report.leader) return;
  const auto& leader = *run.report.leader;
  const auto& previous = run.previous;
  if (previous && previous->leader && *previous->leader != leader)
    add(draft, FindingCode::leader_changed, leader,
        fmt::format("the leader moved from {} to {}", *previous->leader, leader));
  draft.out.next.leader = leader;
  auto row = std::ranges::find(run.report.servers, leader, &ServerRow::name);
  if (row == run.report.servers.end() || !row->node_count) return;
  auto before = previous ? previous->node_count : std::nullopt;
  if (before && *before >= kNodeCountFloor && *row->node_count < *before / 2)
    add(draft, FindingCode::node_count_drop, leader,
        fmt::format("the leader has {} znodes; the last run saw {}", *row->node_count, *before));
  draft.out.next.node_count = row->node_count;
}

void check_membership(const LedgerRun& run, LedgerDraft& draft) {
  auto membership = membership_of(run.facts);
  if (membership.empty()) return;
  const auto& previous = run.previous;
  if (previous && !previous->membership.empty() && previous->membership != membership) {
    std::vector<std::string> added, removed;
    std::ranges::set_difference(membership, previous->membership, std::back_inserter(added));
    std::ranges::set_difference(previous->membership, membership, std::back_inserter(removed));
    add(draft, FindingCode::membership_changed, "",
        fmt::format("the membership changed: added [{}], removed [{}]", fmt::join(added, " "),
                    fmt::join(removed, " ")));
  }
  draft.out.next.membership = std::move(membership);
}

void record_servers(const LedgerRun& run, LedgerDraft& draft) {
  for (const auto& row : run.report.servers) {
    if (!row.zxid) continue;
    auto& entry = draft.out.next.servers[row.name];
    if (row.id) entry.id = row.id;
    entry.high_zxid = std::max(entry.high_zxid, *row.zxid);
    if (row.node_count) entry.node_count = row.node_count;
    entry.mode = to_string(row.state);
    entry.last_seen = run.now;
  }
}

void follow_round(const LedgerRun& run, LedgerDraft& draft) { follow_approvals(draft.out.next, run.report, run.now); }

// The durability marker must be on every server, unchanged, for as long as the ledger lives.
void check_marker(const Marker& marker, const std::optional<RoundTrip>& trip, LedgerDraft& draft) {
  std::vector<std::string> gone, changed;
  bool answered = false;  // some server said whether the marker is there
  for (const auto& read : trip ? trip->reads : std::vector<ReadBack>{}) {
    answered = answered || read.marker_error == ZkError::ok || read.marker_error == ZkError::no_node;
    if (read.marker_error == ZkError::no_node) gone.push_back(read.server);
    else if (read.marker_error == ZkError::ok &&
             (read.marker_czxid != marker.czxid || read.marker_data != marker.content))
      changed.push_back(read.server);
    else if (read.marker_error != ZkError::ok && read.marker_error != ZkError::not_attempted)
      add(draft, FindingCode::marker_unread, read.server,
          fmt::format("could not read the durability marker through {}: {}", read.server,
                      to_string(read.marker_error)));
  }
  if (!answered)
    add(draft, FindingCode::marker_unread, "",
        fmt::format("no server returned the durability marker {}: data loss was not checked this run", marker.path));
  if (!gone.empty())
    record_loss(draft, 1,
                fmt::format("the durability marker {} (czxid {}) is gone on {}", marker.path, zxid_hex(marker.czxid),
                            fmt::join(gone, ", ")));
  if (!changed.empty())
    record_loss(draft, 2,
                fmt::format("the durability marker {} on {} is not the one recorded (czxid {}): it was recreated",
                            marker.path, fmt::join(changed, ", "), zxid_hex(marker.czxid)));
}

// The first ledger run: adopt the marker as the servers show it (created now, or already there).
void adopt_marker(const RoundTrip& trip, LedgerDraft& draft) {
  for (const auto& read : trip.reads) {
    if (read.marker_error != ZkError::ok || !read.marker_czxid) continue;
    draft.out.next.marker = Marker{trip.marker_path, *read.marker_czxid, read.marker_data};
    add(draft, FindingCode::marker_recorded, "",
        fmt::format("durability marker {} recorded (czxid {})", trip.marker_path, zxid_hex(*read.marker_czxid)));
    return;
  }
}

void follow_marker(const LedgerRun& run, LedgerDraft& draft) {
  if (run.previous && run.previous->marker) check_marker(*run.previous->marker, run.facts.round_trip, draft);
  else if (run.facts.round_trip) adopt_marker(*run.facts.round_trip, draft);
}

// The clients' registrations since the last run that read them; the paths read now replace theirs.
void follow_clients(const LedgerRun& run, LedgerDraft& draft) {
  if (!run.report.clients) return;
  if (run.previous && !run.previous->clients.empty())
    for (auto& finding : client_findings(
             run.previous->clients, *run.report.clients,
             {fmt::format("since the last run ({})", run.previous->updated), servers_by_id(run.report.servers)}))
      draft.out.findings.push_back(std::move(finding));
  remember_client_reads(draft.out.next.clients, *run.report.clients);
}

}  // namespace

std::span<const LedgerStep> ledger_steps() {
  static constexpr LedgerStep steps[] = {carry_data_loss_alarm, check_zxid,   check_leader,  check_membership,
                                         record_servers,        follow_round, follow_marker, follow_clients};
  return steps;
}

LedgerDraft start_draft(const LedgerRun& run) {
  LedgerDraft draft;
  if (run.previous) draft.out.next = *run.previous;
  draft.out.next.updated = run.now;
  return draft;
}

LedgerOutcome finish_draft(const LedgerRun& run, LedgerDraft draft) {
  if (!draft.out.next.data_loss && !draft.losses.empty())
    draft.out.next.data_loss = DataLoss{run.now, std::ranges::min(draft.losses).second};
  return std::move(draft.out);
}

LedgerOutcome apply_ledger(const EnsembleFacts& facts, const Report& report, const std::optional<Ledger>& previous,
                           const std::string& now) {
  LedgerRun run{facts, report, previous, now};
  auto draft = start_draft(run);
  for (auto step : ledger_steps()) step(run, draft);
  return finish_draft(run, std::move(draft));
}

}  // namespace zkverify
