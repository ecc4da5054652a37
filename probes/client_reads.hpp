#pragma once
// The clients' registrations, read through one session: each --clients path's own node and its
// ephemeral children with the sessions that hold them. Plain facts; model/judge/client_changes
// says what a change of holder means.

#include <functional>
#include <string>
#include <vector>

#include "model/facts/registrations.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes {

// Reads every path (its node and its children, then each child's stat), all requests of one round
// pipelined on `session`, bounded by `deadline`. A child deleted between the two reads is left out.
std::vector<ClientPathRead> read_client_paths(Keeper& session, const std::vector<std::string>& paths,
                                              Clock::time_point deadline);

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
