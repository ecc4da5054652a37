#pragma once
// The clients' registrations, read through one session: each --clients path's own node and its
// ephemeral children with the sessions that hold them. Plain facts; model/judge/client_changes
// says what a change of holder means.

#include <string>
#include <vector>

#include "model/facts/registrations.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes {

// Reads every path (its node and its children, then each child's stat), all requests of one round
// pipelined on `session`, bounded by `deadline`. A child deleted between the two reads is left out.
std::vector<ClientPathRead> read_client_paths(Keeper& session, const std::vector<std::string>& paths,
                                              Clock::time_point deadline);

}  // namespace zkverify::probes
