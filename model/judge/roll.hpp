#pragma once
// A rolling restart's plan and record, and its verdict. Pure: the roll command fills the record.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/books/watch_book.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/report.hpp"
#include "model/judge/restart_plan.hpp"

namespace zkverify {

// A time window within the roll, in milliseconds since it started.
struct Window {
  long from_ms = 0;
  long until_ms = 0;
};

// --clients: a registration missing, as the roll's watch saw it live, in milliseconds since the roll
// started; `until_ms` when a look found it held again.
struct ClientAbsenceWindow {
  std::string path;
  long from_ms = 0;
  std::optional<long> until_ms;
};

struct RollStep {
  std::string server;
  int command_status = 0;
  Window span;                 // the step, from its COMMAND to the end of its wait
  std::optional<Window> down;  // the server not serving
  std::optional<std::string> leader_before, leader_after;
  std::string version_before, version_after;  // the server's release (srvr) in the checks around it; "" unknown
  std::optional<Window> leaderless;           // the longest time without a leader
  std::chrono::milliseconds longest_unavailable{0};
  Verdict verdict = Verdict::healthy;   // the step's last check
  std::vector<Finding> findings;        // the step's own (command, recovery)
  std::vector<Finding> check_findings;  // its last check's, when that was not healthy: why it did not recover
  std::string summary;                  // step's summary line
  // --clients: each registration from the check before the step to its last look (the report's lanes).
  std::vector<RegistrationDelta> client_changes;
  std::vector<ClientAbsenceWindow> client_absences;  // what the watch saw of them during the step
};

struct RollRefusal {
  std::string server;
  std::string reason;
};

// `event` with its elapsed time counted from `roll_started` instead of from the watch's start: the
// roll's steps, its poller's windows and the watch's events on one clock.
WatchEvent on_roll_clock(WatchEvent event, Clock::time_point roll_started);

struct RollRecord {
  std::vector<std::string> servers;  // as listed
  std::set<std::string> skipped;     // done in this restart round before the roll started
  std::vector<RollStep> steps;
  std::optional<RollRefusal> refused;  // the check before a step said no
  bool stopped_by_signal = false;
  bool complete = false;
  long duration_ms = 0;
  WatchTotals totals;  // the one watch across the roll
  std::vector<WatchEvent> events;
  std::vector<Finding> watch_findings;
  Report last_report;

  // Each listed server's release as last seen: the last check's, or a later step's version_after.
  [[nodiscard]] std::map<std::string, std::string> versions() const;
  // Servers restarted by this roll (a step whose only findings are about the clients restarted its
  // server, and the ledger's round has it), then the ones not yet done.
  [[nodiscard]] std::vector<std::string> done() const;
  [[nodiscard]] std::vector<std::string> remaining() const;
};

// The next server to restart: the first in restart_order(report) not in `done` (this roll and the
// round at its start) nor in `round` (the ledger's restart round now); none when all are.
std::optional<std::string> next_to_restart(const Report& report, const std::set<std::string>& done,
                                           const std::set<std::string>& round);

struct RollPlanStep {
  std::string server;
  std::string reason;  // its place in the order
  RestartSafety safety;
};
struct RollPlan {
  std::vector<RollPlanStep> steps;
  std::vector<std::string> skipped;
  [[nodiscard]] bool all_safe() const;
};
// --dry-run: the order, and whether each server would be safe in turn, each earlier one back (with
// --to: back on the list whose voters are `returns_with`, as the real steps judge it).
RollPlan plan_roll(const Report& report, const std::set<std::string>& skipped,
                   const std::optional<std::set<int>>& returns_with = std::nullopt);

// critical when a step or the watch had a critical finding; degraded when the roll did not complete
// or any step had a finding; else healthy.
Verdict roll_verdict(const RollRecord& roll);

}  // namespace zkverify
