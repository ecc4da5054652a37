#pragma once
// Pure checks: facts in, Report out. No sockets, no clocks, no printing.

#include <optional>
#include <vector>

#include "probes/facts.hpp"
#include "verifier/judge/report.hpp"

namespace zkverify::verifier {

struct EnsembleFacts {
  std::vector<probes::ServerProbe> probes;     // one per listed server, in list order
  std::optional<probes::RoundTrip> round_trip;  // empty when the round trip was skipped
  bool write_skipped = false;                   // --no-write
  probes::PhaseTimings timings{};               // measured by whoever gathered the facts
};

// Judges the ensemble: reachability, leaders, quorum, sync, membership, the round trip.
Report judge(const EnsembleFacts& facts);

// Sorts the findings worst first and sets the verdict from them (after findings were added).
void finalize(Report& report);

// The zoo.cfg line that would let zkverify use `words` (srvr and ruok kept, as deployments need them).
std::string whitelist_line(const std::vector<std::string>& words);

}  // namespace zkverify::verifier
