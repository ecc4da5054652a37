#pragma once
// One server's restart as `step` and `roll` run it: the check before (healthy, safe, and approved as
// in flight under the ledger's lock), COMMAND, the wait until the server serves and the ensemble is
// healthy again, and the ledger after. The watch engine is the caller's: step runs one per step,
// roll one for the whole roll.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/books/restart_timeline.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/judge/step.hpp"
#include "probes/watch_engine.hpp"
#include "verifier/check/child_process.hpp"
#include "verifier/check/context.hpp"
#include "verifier/check/ensemble_check.hpp"

namespace zkverify::verifier {

struct StepPlan {
  std::vector<ServerAddress> servers;
  std::string restart;  // the server COMMAND restarts
  std::vector<std::string> command;
  std::chrono::milliseconds timeout{600000};  // COMMAND's, then the wait for recovery's
  std::chrono::milliseconds check_timeout{5000};
  std::optional<std::string> state_file;
  std::string namespace_path = "/zkverify";
  std::vector<std::string> client_paths;     // --clients
  int stable = 3;                            // healthy checks in a row that end the wait
  std::chrono::milliseconds interval{1000};  // between those checks
  // The stop signal that interrupts the step (passed on to COMMAND): the first for step, the second
  // for roll (whose first only ends the roll after the step).
  int interrupt_at = 1;
  // --output json: COMMAND's stdout goes to our stderr, so that ours stays one JSON object.
  bool command_stdout_to_stderr = false;
  // The leader as the check before the step saw it: the poller's first answers can miss it (its
  // srvr refused under maxClientCnxns), and a leader restarted before it answered would be lost.
  std::optional<std::string> leader_before;
  std::string version_before;                                 // the restarted server's release in that check
  std::optional<std::vector<ClientPathRead>> clients_before;  // --clients: what that check read
  // --to: the voters of the list the restarted server comes back with (a membership change), checked
  // against the lists the others hold before it goes (membership_refusal).
  std::optional<std::set<int>> returns_with;
  // --zoo-cfg: the list each server runs with, for servers that do not report theirs (3.4), by name.
  std::map<std::string, ConfFacts> given_lists;
  // --to's whole list: the one a server whose list was given holds once it restarted.
  std::optional<ConfFacts> returns_list;
  std::optional<Election> last_election;  // the ledger's, at the check before (--state)
  // --refuse-at-risk: before the leader's step, COMMAND is not run when election-outlasts-timeouts
  // names client sessions (the policy that a client's session is worth more than the step).
  bool refuse_at_risk = false;
};

// The checks' options for a plan, before `plan.restart` restarts.
EnsembleOptions check_options(const StepPlan& plan);
// After it restarted: where its list was given, it now holds --to's (hold_returned_list).
EnsembleOptions check_options_after_restart(const StepPlan& plan);
// Where `given_lists` has `server`'s list (--zoo-cfg), --to's `returns_list` replaces it: a server
// restarted on a new zoo.cfg holds the new list. Nothing when either is missing.
void hold_returned_list(std::map<std::string, ConfFacts>& given_lists, const std::optional<ConfFacts>& returns_list,
                        const std::string& server);

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

struct StepRun {
  Clock::time_point started, ended;
  ChildOutcome outcome;
  Report report;  // the last check
  int healthy_streak = 0;
  StepTimeline timeline;
  bool interrupted = false;  // the plan's stop signal came
  // --clients: the restarted server's cons before COMMAND; none when not asked or not answered.
  std::optional<ConsFacts> cons_before;
  // mntr's count of the tree's ephemerals on another server (`ephemerals_on`), before COMMAND and
  // after the recovery, with no check in flight; none where mntr did not answer.
  std::string ephemerals_on;
  std::optional<std::int64_t> ephemerals_before, ephemerals_after;
  std::vector<ConsFacts> cons_everywhere;  // the leader's step after an election the ledger saw: every server's
  // --refuse-at-risk refused the step before COMMAND: the sessions at risk, as the finding says them.
  std::optional<Finding> refused;
};

// Why --refuse-at-risk refused a step, as step and roll say it.
inline constexpr std::string_view kSessionsAtRisk =
    "it leads, and client sessions have timeouts the last election outlasted (election-outlasts-timeouts)";

// After a go: runs COMMAND (bounded by plan.timeout, interrupted by plan.interrupt_at) while polling who
// serves and leads, waits for recovery (one check only after a timeout, none after an interruption
// or a refusal: --refuse-at-risk and sessions at risk before the leader's step, `refused`),
// and records the outcome in the ledger: the server joins the restart round when COMMAND exited 0
// and it serves again; its approval is no longer in flight either way. Progress goes to context.err.
// `watch` is the step's (the roll's) watch engine, which follows the clients' registrations.
StepRun run_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context, probes::WatchEngine& watch);

// Ends `server`'s approval without a restart (COMMAND never ran).
void forget_approval(const StepPlan& plan, const std::string& server);

// What the watch's live follower saw of the registrations (--clients) that overlaps `run`: absences
// that began before it ended and were not over before it started.
std::vector<RegistrationAbsence> seen_during(const std::vector<RegistrationAbsence>& absences, const StepRun& run);

// The step as the judge sees it (model/judge/step.hpp: its findings, its verdict).
StepFacts step_facts(const StepPlan& plan, const StepRun& run);

}  // namespace zkverify::verifier
