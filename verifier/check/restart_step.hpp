#pragma once
// One server's restart as `step` and `roll` run it: the check before (healthy, safe, and approved as
// in flight under the ledger's lock), COMMAND, the wait until the server serves and the ensemble is
// healthy again, and the ledger after. The watch engine is the caller's: step runs one per step,
// roll one for the whole roll.

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/watch_engine.hpp"
#include "verifier/check/child_process.hpp"
#include "verifier/check/context.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "model/judge/restart_plan.hpp"

namespace zkverify::verifier {

struct StepPlan {
  std::vector<ServerAddress> servers;
  std::string restart;                        // the server COMMAND restarts
  std::vector<std::string> command;
  std::chrono::milliseconds timeout{600000};  // COMMAND's, then the wait for recovery's
  std::chrono::milliseconds check_timeout{5000};
  std::optional<std::string> state_file;
  std::string namespace_path = "/zkverify";
  int stable = 3;                             // healthy checks in a row that end the wait
  std::chrono::milliseconds interval{1000};   // between those checks
  const std::atomic<int>* interrupt = nullptr;  // non-zero: stop the step now (passed on to COMMAND)
  // --output json: COMMAND's stdout goes to our stderr, so that ours stays one JSON object.
  bool command_stdout_to_stderr = false;
  // The leader as the check before the step saw it: the poller's first answers can miss it (its
  // srvr refused under maxClientCnxns), and a leader restarted before it answered would be lost.
  std::optional<std::string> leader_before;
};

// The checks' options for a plan.
EnsembleOptions check_options(const StepPlan& plan);

// What the check before a restart decided.
struct StepDecision {
  Report report;
  std::optional<std::string> server;  // the one chosen; none when nothing is left to restart
  RestartSafety safety;
  [[nodiscard]] bool go() const { return server && report.verdict == Verdict::healthy && safety.safe; }
};
// Picks the server to restart from a check's report and the ledger (its restart round).
using ServerChooser = std::function<std::optional<std::string>(const Report&, const Ledger&)>;

// One check under the ledger's lock: `choose` picks the server, restart_safety decides (counting the
// approvals in flight), and a go is recorded as in flight before the lock is released.
StepDecision decide_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context,
                            const ServerChooser& choose);

// What the poller saw while the step ran.
struct StepTimeline {
  std::optional<std::chrono::milliseconds> downtime;  // the longest time the server did not serve
  std::optional<std::string> leader_before, leader_after;
  std::chrono::milliseconds longest_leaderless{0};    // the election, when the leader moved
  using Span = std::pair<Clock::time_point, Clock::time_point>;
  std::optional<Span> down_window, leaderless_window;  // when (for roll's timeline)
  // The server was seen not serving in two polls in a row, or its srvr "Received" count fell (it
  // counts from zero again after a restart): the restart happened, not just a COMMAND that returned.
  bool restart_seen = false;
};

struct StepRun {
  Clock::time_point started, ended;
  ChildOutcome outcome;
  Report report;          // the last check
  int healthy_streak = 0;
  StepTimeline timeline;
  bool interrupted = false;  // plan.interrupt fired
};

// After a go: runs COMMAND (bounded by plan.timeout, interrupted by plan.interrupt) while polling who
// serves and leads, waits for recovery (one check only after a timeout, none after an interruption),
// and records the outcome in the ledger: the server joins the restart round when COMMAND exited 0
// and it serves again; its approval is no longer in flight either way. Progress goes to context.err.
StepRun run_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context);

// Ends `server`'s approval without a restart (COMMAND never ran).
void forget_approval(const StepPlan& plan, const std::string& server);

// The step's own findings: command-timed-out or command-failed, interrupted, not-recovered.
std::vector<Finding> step_findings(const StepPlan& plan, const StepRun& run);

// "step NAME: command exited 0; NAME down for 2.1s; leader stayed ...; longest write-unavailability
// ...; sessions 5 kept, 0 expired; writes 99 acknowledged, 0 lost".
std::string step_summary(const std::string& server, const StepRun& run, std::chrono::milliseconds longest_unavailable,
                         const WatchTotals& totals);
// The `step` object of the JSON output.
nlohmann::json step_json(const std::string& server, const StepRun& run, const std::string& summary);

}  // namespace zkverify::verifier
