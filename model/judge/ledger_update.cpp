#include "model/judge/ledger_update.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// One run's comparison with the previous ledger: each check adds findings and updates `next`.
class LedgerUpdate {
 public:
  LedgerUpdate(const EnsembleFacts& facts, const Report& report, const std::optional<Ledger>& previous,
               const std::string& now)
      : facts_(facts), report_(report), previous_(previous), now_(now) {
    if (previous_) out_.next = *previous_;
    out_.next.updated = now_;
  }

  LedgerOutcome run() && {
    carry_data_loss_alarm();
    check_zxid();
    check_leader();
    check_membership();
    record_servers();
    follow_approvals(out_.next, report_, now_);
    if (previous_ && previous_->marker) check_marker(*previous_->marker, facts_.round_trip);
    else if (!out_.next.marker && facts_.round_trip) adopt_marker(*facts_.round_trip);
    return std::move(out_);
  }

 private:
  void add(FindingCode code, std::string server, std::string message) {
    out_.findings.push_back(make_finding(code, std::move(server), std::move(message)));
  }
  void add(Severity severity, FindingCode code, std::string server, std::string message) {
    out_.findings.push_back({severity, code, std::move(server), std::move(message)});
  }
  void record_loss(const std::string& message) {
    add(FindingCode::data_loss, "", message);
    if (!out_.next.data_loss) out_.next.data_loss = DataLoss{now_, message};
  }

  void carry_data_loss_alarm() {
    if (previous_ && previous_->data_loss)
      add(FindingCode::data_loss, "",
          fmt::format("data loss was detected at {}: {}. This stays critical until --reset-state",
                      previous_->data_loss->detected, previous_->data_loss->message));
  }

  // The ensemble's zxid: the highest any serving server showed (after the write, when there was one).
  void check_zxid() {
    std::optional<Zxid> current;
    for (const auto& row : report_.servers)
      if (row.zxid && is_serving(row.state) && (!current || *current < *row.zxid)) current = row.zxid;
    if (!current || !report_.leader) return;
    if (previous_ && *current < previous_->high_zxid && !previous_->data_loss)
      record_loss(fmt::format("the ensemble's zxid went backwards: {} was seen before, now the highest is {}",
                              zxid_text(previous_->high_zxid), zxid_text(*current)));
    else if (previous_ && current->epoch() > previous_->high_zxid.epoch())
      add(FindingCode::epoch_changed, "",
          fmt::format("epoch {} -> {}: a leader was elected since the last run", previous_->high_zxid.epoch(),
                      current->epoch()));
    out_.next.high_zxid = std::max(out_.next.high_zxid, *current);
  }

  void check_leader() {
    if (!report_.leader) return;
    const auto& leader = *report_.leader;
    if (previous_ && previous_->leader && *previous_->leader != leader)
      add(FindingCode::leader_changed, leader,
          fmt::format("the leader moved from {} to {}", *previous_->leader, leader));
    out_.next.leader = leader;
    auto row = std::ranges::find(report_.servers, leader, &ServerRow::name);
    if (row == report_.servers.end() || !row->node_count) return;
    auto before = previous_ ? previous_->node_count : std::nullopt;
    if (before && *before >= kNodeCountFloor && *row->node_count < *before / 2)
      add(FindingCode::node_count_drop, leader,
          fmt::format("the leader has {} znodes; the last run saw {}", *row->node_count, *before));
    out_.next.node_count = row->node_count;
  }

  void check_membership() {
    auto membership = membership_of(facts_);
    if (membership.empty()) return;
    if (previous_ && !previous_->membership.empty() && previous_->membership != membership) {
      std::vector<std::string> added, removed;
      std::ranges::set_difference(membership, previous_->membership, std::back_inserter(added));
      std::ranges::set_difference(previous_->membership, membership, std::back_inserter(removed));
      add(FindingCode::membership_changed, "",
          fmt::format("the membership changed: added [{}], removed [{}]", fmt::join(added, " "),
                      fmt::join(removed, " ")));
    }
    out_.next.membership = std::move(membership);
  }

  void record_servers() {
    for (const auto& row : report_.servers) {
      if (!row.zxid) continue;
      auto& entry = out_.next.servers[row.name];
      if (row.id) entry.id = row.id;
      entry.high_zxid = std::max(entry.high_zxid, *row.zxid);
      if (row.node_count) entry.node_count = row.node_count;
      entry.mode = to_string(row.state);
      entry.last_seen = now_;
    }
  }

  // The durability marker must be on every server, unchanged, for as long as the ledger lives.
  void check_marker(const Marker& marker, const std::optional<RoundTrip>& trip) {
    std::vector<std::string> gone, changed;
    bool answered = false;  // some server said whether the marker is there
    for (const auto& read : trip ? trip->reads : std::vector<ReadBack>{}) {
      answered = answered || read.marker_error == ZkError::ok || read.marker_error == ZkError::no_node;
      if (read.marker_error == ZkError::no_node) gone.push_back(read.server);
      else if (read.marker_error == ZkError::ok &&
               (read.marker_czxid != marker.czxid || read.marker_data != marker.content))
        changed.push_back(read.server);
      else if (read.marker_error != ZkError::ok && read.marker_error != ZkError::not_attempted)
        add(FindingCode::marker_unread, read.server,
            fmt::format("could not read the durability marker through {}: {}", read.server,
                        to_string(read.marker_error)));
    }
    if (!answered)
      add(FindingCode::marker_unread, "",
          fmt::format("no server returned the durability marker {}: data loss was not checked this run", marker.path));
    if (!gone.empty())
      record_loss(fmt::format("the durability marker {} (czxid {}) is gone on {}", marker.path, zxid_hex(marker.czxid),
                              fmt::join(gone, ", ")));
    if (!changed.empty())
      record_loss(fmt::format("the durability marker {} on {} is not the one recorded (czxid {}): it was recreated",
                              marker.path, fmt::join(changed, ", "), zxid_hex(marker.czxid)));
  }

  // The first ledger run: adopt the marker as the servers show it (created now, or already there).
  void adopt_marker(const RoundTrip& trip) {
    for (const auto& read : trip.reads) {
      if (read.marker_error != ZkError::ok || !read.marker_czxid) continue;
      out_.next.marker = Marker{trip.marker_path, *read.marker_czxid, read.marker_data};
      add(FindingCode::marker_recorded, "",
          fmt::format("durability marker {} recorded (czxid {})", trip.marker_path, zxid_hex(*read.marker_czxid)));
      return;
    }
  }

  const EnsembleFacts& facts_;
  const Report& report_;
  const std::optional<Ledger>& previous_;
  const std::string& now_;
  LedgerOutcome out_;
};

}  // namespace

LedgerOutcome apply_ledger(const EnsembleFacts& facts, const Report& report, const std::optional<Ledger>& previous,
                           const std::string& now) {
  return LedgerUpdate(facts, report, previous, now).run();
}

}  // namespace zkverify
