#pragma once
// Pure checks: facts in, Report out. No sockets, no clocks, no printing.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/facts/facts.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// With TLS on: zkverify's own certificate, and when an expiry is worth a warning.
struct TlsCheckFacts {
  std::optional<CertificateFacts> client_certificate;  // none: it presents no client certificate
  std::chrono::milliseconds expiry_warning{std::chrono::hours(24 * 14)};
  std::chrono::system_clock::time_point now{};  // the wall clock certificates are judged by
};

struct EnsembleFacts {
  std::vector<ServerProbe> probes;      // one per listed server, in list order
  std::optional<RoundTrip> round_trip;  // empty when the round trip was skipped
  bool write_skipped = false;           // --no-write
  PhaseTimings timings{};               // measured by whoever gathered the facts
  // Servers an earlier run (the ledger) saw as observers: counted as observers while unreachable,
  // when the voters can only be estimated.
  std::set<std::string> remembered_observers{};
  std::optional<TlsCheckFacts> tls{};  // none: plain TCP
  // The list a server runs with as the operator gave it (--zoo-cfg), by name: used for a server that
  // does not report its own (3.4, conf not whitelisted); a server's own report wins.
  std::map<std::string, ConfFacts> given_lists{};
};

// Judges the ensemble: reachability, leaders, quorum, sync, membership, the round trip.
Report judge(const EnsembleFacts& facts);

// Sorts the findings worst first and sets the verdict from them (after findings were added).
void finalize(Report& report);

// The zoo.cfg line that would let zkverify use `words` (srvr and ruok kept, as deployments need them).
std::string whitelist_line(const std::vector<std::string>& words);

}  // namespace zkverify
