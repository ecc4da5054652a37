#pragma once
// Pure checks: facts in, Report out. No sockets, no clocks, no printing.

#include <string>
#include <vector>

#include "model/judge/ensemble_facts.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// Judges the ensemble: reachability, leaders, quorum, sync, membership, the round trip.
Report judge(const EnsembleFacts& facts);

// Sorts the findings worst first and sets the verdict from them (after findings were added).
void finalize(Report& report);

// The zoo.cfg line that would let zkverify use `words` (srvr and ruok kept, as deployments need them).
std::string whitelist_line(const std::vector<std::string>& words);

}  // namespace zkverify
