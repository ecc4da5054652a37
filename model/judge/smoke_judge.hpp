#pragma once
// Pure judgement of `zkverify smoke`: the ensemble's report and what the session cases saw
// (probes/smoke_facts.hpp) become named cases, each passed, failed or skipped, with a one-line
// message, the detail behind it and its figures. No I/O, no clock.

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/facts/smoke_facts.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

enum class CaseOutcome { passed, failed, skipped };

struct CaseResult {
  std::string id;  // "round-trip", "server-serving/zoo-1", "latency/zoo-1"
  CaseOutcome outcome = CaseOutcome::passed;
  std::string message;                                          // one line: what went wrong (or, passed, what was seen)
  std::string detail;                                           // the steps behind it, one per line
  std::vector<std::pair<std::string, std::string>> properties;  // figures as name/value
  std::string figures;                                          // the same, for people (JUnit system-out)
  double seconds = 0;
};

struct SmokeLimits {
  std::optional<std::chrono::milliseconds> max_latency;  // p99 of any operation; none: no limit
};

// The listed servers that serve clients, in list order: leaders, followers and observers, and a
// lone listed server running standalone (a CI job's one ZooKeeper container).
std::vector<std::string> serving_servers(const Report& report);
// What --wait waits for: every listed server serves, and one leads (or the lone one is standalone).
bool ready_for_smoke(const Report& report);

// server-serving/<name> (one per listed server), single-leader, quorum, membership-consistent.
std::vector<CaseResult> judge_ensemble(const Report& report);

// round-trip, ephemeral-cleanup, watch-fires, sequential-order, multi-atomic, cas-version,
// session-move, latency/<name> (one per server the sessions used), clients:<path> (one per --clients
// path read), cleanup.
std::vector<CaseResult> judge_sessions(const SmokeObservations& seen, const SmokeLimits& limits);

// The session cases failed without running, because `why` (e.g. no server serving).
std::vector<CaseResult> sessions_not_run(const std::vector<std::string>& servers, const std::string& why);

// The p-th percentile (0 < p <= 100, nearest rank) of `samples`; 0 when there are none.
std::chrono::microseconds percentile(std::vector<std::chrono::microseconds> samples, double p);

// The number of a sequential node's name: "/a/n-0000000012" -> 12; none when it has no 10 digits.
std::optional<long long> sequence_number(const std::string& path);

int count(const std::vector<CaseResult>& cases, CaseOutcome outcome);

}  // namespace zkverify
