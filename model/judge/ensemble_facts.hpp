#pragma once
// The judge's input: everything gathered about the ensemble in one look (the probes, the round
// trip) and what the ledger and the operator add. Below every check: they read it, it names none.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/facts/credentials.hpp"
#include "model/facts/facts.hpp"

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
  Clock::time_point started{};          // when gathering began: the timeline's origin
  // Servers an earlier run (the ledger) saw as observers: counted as observers while unreachable,
  // when the voters can only be estimated.
  std::set<std::string> remembered_observers{};
  std::optional<TlsCheckFacts> tls{};       // none: plain TCP
  std::optional<KerberosFacts> kerberos{};  // none: no GSSAPI
  // The list a server runs with as the operator gave it (--zoo-cfg), by name: used for a server that
  // does not report its own (3.4, conf not whitelisted); a server's own report wins.
  std::map<std::string, ConfFacts> given_lists{};
};

}  // namespace zkverify
