#pragma once
// The ensemble's checks that live outside checks.cpp, for judge() to run (internal to model/judge).
// Each is a free function of the facts and what derive() computed from them: none reads what
// another check found, so they can run in any order.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/judge/ensemble_facts.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

struct Derived;

// The findings the checks add, in the order they add them.
struct Findings {
  std::vector<Finding> list;
  void add(FindingCode code, std::string server, std::string message);  // at the code's usual severity
  void add(Severity severity, FindingCode code, std::string server, std::string message);
};

// One check: the facts and what is derived from them in, findings out.
using Check = void (*)(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
// Every check judge() runs, in the order their findings of one severity print (checks.cpp).
std::span<const Check> ensemble_checks();

// round_trip_checks.cpp: digest ACLs and refused credentials, then the round trip's write and reads.
void check_access(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
void check_round_trip(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
// The --clients paths the writer's session could not read (clients-unread).
void check_clients(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
// The report's summary of the round trip: none when it was skipped or impossible.
std::optional<RoundTripSummary> round_trip_summary(const EnsembleFacts& facts, const Derived& derived);

// id_checks.cpp: one id per server, every id in a list and at the host the lists give it.
void check_ids(const EnsembleFacts& facts, const Derived& derived, Findings& findings);

// capability_checks.cpp: what zkverify could use, the servers' releases, the TLS certificates and
// the Kerberos credentials.
void check_capabilities(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
void check_versions(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
void check_certificates(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
// zkverify's Kerberos credentials (GSSAPI): a ticket cache's ticket within the hour of its end, a
// principal's key or account within 14 days of its expiry.
void check_kerberos(const EnsembleFacts& facts, const Derived& derived, Findings& findings);
// zkverify's own certificate as the report shows it: none over plain TCP.
std::optional<ClientTls> client_tls(const EnsembleFacts& facts);

}  // namespace zkverify
