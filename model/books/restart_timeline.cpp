#include "model/books/restart_timeline.hpp"

#include <algorithm>

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
    if (probe.address.name != target) {
      // The restarted server says "not serving" while it starts and joins, whoever leads: only
      // another server's is evidence of an election (with the others' polls timed out on a loaded
      // machine, its answer alone made a follower's restart look leaderless).
      if (probe.srvr && probe.srvr->error == ProbeError::not_serving) seen.someone_looking = true;
      if (has_facts(probe.srvr)) seen.connections[probe.address.name] = probe.srvr->facts.connections;
      continue;
    }
    seen.target_serving = mode && is_serving(*mode);
    if (has_facts(probe.srvr)) {
      seen.target_received = probe.srvr->facts.received;
      seen.target_connections = probe.srvr->facts.connections;
    }
  }
  return seen;
}

RestartTimeline::RestartTimeline(std::optional<std::string> leader_before, std::optional<Clock::time_point> started)
    : leading_(leader_before) {
  timeline_.leader_before = timeline_.leader_after = std::move(leader_before);
  if (leading_) last_led_at_ = started;
}

std::int64_t ConnectionsMoved::moved() const {
  std::int64_t sum = 0;
  for (const auto& [server, gain] : gained) sum += gain;
  return sum;
}

void RestartTimeline::polled(const PollSeen& seen) {
  note_connections(seen);
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

// Evidence only: a poll where someone follows but no leader answered says a leader exists, unseen;
// a poll where nobody leads or follows and some server answered it does not serve says there is
// none; a poll nobody answered says nothing. No leader was seen from the last poll
// that showed the old leader leading to the first that shows a new one (or the same one again,
// after polls that showed none); the part of that not covered by polls showing none is unobserved.
void RestartTimeline::note_leader(const PollSeen& seen) {
  if (!seen.leader) {
    // Evidence of none is a server that answered it is not serving; refused or timed-out polls are none.
    if (seen.someone_follows || !seen.someone_looking) return;
    if (!none_first_) none_first_ = seen.at;
    none_last_ = seen.at;
    return;
  }
  if (!timeline_.leader_before) timeline_.leader_before = seen.leader;
  timeline_.leader_after = seen.leader;
  bool moved = leading_ && *leading_ != *seen.leader;
  if (moved || none_first_) {
    auto from = last_led_at_.value_or(none_first_.value_or(seen.at));
    auto without = duration_cast<milliseconds>(seen.at - from);
    if (without > timeline_.longest_leaderless) {
      timeline_.longest_leaderless = without;
      auto observed = none_first_ ? duration_cast<milliseconds>(*none_last_ - *none_first_) : milliseconds(0);
      timeline_.leaderless_unobserved = without - observed;
      timeline_.leaderless_window = {{from, seen.at}};
    }
  }
  leading_ = seen.leader;
  last_led_at_ = seen.at;
  none_first_.reset();
  none_last_.reset();
}

// The first poll whose gains cover the restarted server's clients, or the one with the most.
void RestartTimeline::note_connections(const PollSeen& seen) {
  if (moves_ == Moves::ended) return;
  if (seen.target_serving) {
    if (moves_ == Moves::moving) moves_ = Moves::ended;
    else if (seen.target_connections) {
      target_connections_ = seen.target_connections;
      connections_before_ = seen.connections;
    }
    return;
  }
  if (moves_ == Moves::before) {
    if (!target_connections_) return;  // not counted before it stopped: nothing to follow
    moves_ = Moves::moving;
    moving_since_ = seen.at;
    timeline_.connections_moved = ConnectionsMoved{std::max<std::int64_t>(*target_connections_ - 1, 0), {}, {}, false};
  }
  auto& moved = *timeline_.connections_moved;
  if (moved.all) return;
  ConnectionsMoved now{moved.clients, {}, duration_cast<milliseconds>(seen.at - moving_since_), false};
  for (const auto& [server, count] : seen.connections)
    if (auto before = connections_before_.find(server); before != connections_before_.end() && count > before->second)
      now.gained[server] = count - before->second;
  now.all = now.moved() >= now.clients;
  if (now.all || now.moved() > moved.moved()) moved = std::move(now);
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
