#pragma once
// The clients' registrations, read through one session: each --clients path's own node and its
// ephemeral children with the sessions that hold them. Plain facts; model/judge/client_changes
// says what a change of holder means.

#include <functional>
#include <string>
#include <vector>

#include "model/facts/registrations.hpp"
#include "probes/keeper.hpp"
#include "probes/stop_signals.hpp"

namespace zkverify::probes {

// Reads every path (its node and its children, then each child's stat), all requests of one round
// pipelined on `session`, bounded by `deadline`. A child deleted between the two reads is left out.
std::vector<ClientPathRead> read_client_paths(Keeper& session, const std::vector<std::string>& paths,
                                              Clock::time_point deadline);

// Follows the registrations `awaited` (their paths) until each is held again, by whichever session,
// or `deadline`, or the `nth` stop of `signals`: a child watch on each one's parent says when to read
// `paths` again (watches, not a polling loop). Returns the last reads.
std::vector<ClientPathRead> await_registrations(Keeper& session, const std::vector<std::string>& paths,
                                                const std::vector<std::string>& awaited, Clock::time_point deadline,
                                                StopSignals* signals, int nth = 1);

// One round of following `paths` (the watch engine's, with --clients): child watches on each path and
// on each path's parent (a path that is itself a registration, such as /controller), then the reads,
// all bounded by `deadline`. `changed` runs (on the session's thread; it must not block) when one of
// those watches fires: the registrations changed since, and another round would see how.
struct FollowRound {
  std::vector<ClientPathRead> reads;
  int watching = 0;  // the watches set: none, and nothing will call `changed`
};
FollowRound follow_round(Keeper& session, const std::vector<std::string>& paths, const std::function<void()>& changed,
                         Clock::time_point deadline);

}  // namespace zkverify::probes
