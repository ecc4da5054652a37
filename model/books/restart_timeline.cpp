#include "model/books/restart_timeline.hpp"

namespace zkverify {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

PollSeen poll_seen(const std::vector<ServerProbe>& probed, const std::string& target, Clock::time_point at) {
  PollSeen seen;
  seen.at = at;
  for (const auto& probe : probed) {
    auto mode = mode_of(probe);
    if (mode == Mode::leader) seen.leader = probe.address.name;
    if (mode == Mode::follower || mode == Mode::observer) seen.someone_follows = true;
    if (probe.address.name != target) continue;
    seen.target_serving = mode && is_serving(*mode);
    if (has_facts(probe.srvr)) seen.target_received = probe.srvr->facts.received;
  }
  return seen;
}

RestartTimeline::RestartTimeline(std::optional<std::string> leader_before) {
  timeline_.leader_before = timeline_.leader_after = std::move(leader_before);
}

void RestartTimeline::polled(const PollSeen& seen) {
  note_restart(seen);
  note_downtime(seen);
  note_leader(seen);
}

// Two polls in a row without the server serving: one refused connection is not a restart.
void RestartTimeline::note_restart(const PollSeen& seen) {
  polls_not_serving_ = seen.target_serving ? 0 : polls_not_serving_ + 1;
  bool counter_fell = seen.target_received && last_received_ && *seen.target_received < *last_received_;
  if (polls_not_serving_ >= 2 || counter_fell) timeline_.restart_seen = true;
  if (seen.target_received) last_received_ = seen.target_received;
}

// The longest time the server did not serve: a single missed probe before the restart (a refused
// connection) must not stand for the outage.
void RestartTimeline::note_downtime(const PollSeen& seen) {
  if (!seen.target_serving && !down_since_) down_since_ = seen.at;
  if (!seen.target_serving || !down_since_) return;
  if (!timeline_.downtime || seen.at - *down_since_ > *timeline_.downtime) {
    timeline_.downtime = duration_cast<milliseconds>(seen.at - *down_since_);
    timeline_.down_window = {{*down_since_, seen.at}};
  }
  down_since_.reset();
}

// A server follows only while a leader holds a quorum: when no leader answered but someone
// follows, the leader's own srvr was missed (maxClientCnxns, a slow reply), and the poll says
// nothing of who leads.
void RestartTimeline::note_leader(const PollSeen& seen) {
  if (!seen.leader && seen.someone_follows) return;
  if (!seen.leader) {
    if (!leaderless_since_) leaderless_since_ = seen.at;
    return;
  }
  if (!timeline_.leader_before) timeline_.leader_before = seen.leader;
  timeline_.leader_after = seen.leader;
  if (leaderless_since_ && seen.at - *leaderless_since_ > timeline_.longest_leaderless) {
    timeline_.longest_leaderless = duration_cast<milliseconds>(seen.at - *leaderless_since_);
    timeline_.leaderless_window = {{*leaderless_since_, seen.at}};
  }
  leaderless_since_.reset();
}

StepTimeline RestartTimeline::timeline(Clock::time_point now) const {
  auto copy = timeline_;
  if (down_since_ && (!copy.downtime || now - *down_since_ > *copy.downtime)) {  // still down
    copy.downtime = duration_cast<milliseconds>(now - *down_since_);
    copy.down_window = {{*down_since_, now}};
  }
  return copy;
}

}  // namespace zkverify
