// `zkverify step`: one manual step of a rolling upgrade, wrapped. Before: healthy and safe to restart
// NAME, or COMMAND is not run. During: the watch engine, and a poller timing NAME's downtime and the
// election. After: NAME serves and caught up, the ensemble is healthy for the stability window, the
// ledger holds, no session expired, no acknowledged write was lost.

#include <csignal>
#include <atomic>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "probes/four_letter.hpp"
#include "probes/watch_engine.hpp"
#include "verifier/commands/child_process.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/ensemble.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/watch.hpp"
#include "verifier/judge/restart_plan.hpp"
#include "verifier/judge/watch_judge.hpp"
#include "verifier/render/json_text.hpp"
#include "verifier/render/report_view.hpp"
#include "verifier/render/time_text.hpp"
#include "verifier/render/watch_view.hpp"
#include "verifier/store/ledger_file.hpp"

namespace zkverify::verifier {

namespace {

using probes::Clock;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

struct StepOptions {
  std::vector<probes::ServerAddress> servers;
  std::string restart;                        // NAME
  std::vector<std::string> command;           // after --
  std::chrono::milliseconds timeout{600000};  // for NAME and the ensemble to be healthy again
  std::chrono::milliseconds check_timeout{5000};
  std::optional<std::string> state_file;
  OutputFormat output = OutputFormat::text;
  std::string namespace_path = "/zkverify";
  WatchTuning tuning;
  int stable = 3;
  std::chrono::milliseconds interval{1000};
};

// What the poller saw while the step ran.
struct StepTimeline {
  std::optional<milliseconds> downtime;  // NAME not serving, first to last
  std::optional<std::string> leader_before, leader_after;
  milliseconds longest_leaderless{0};    // the election, when the leader moved
};

// Polls srvr on every server ten times a second: when NAME stopped and started serving, and how
// long the ensemble had no leader.
class Poller {
 public:
  Poller(std::vector<probes::ServerAddress> servers, std::string name)
      : servers_(std::move(servers)), name_(std::move(name)), thread_([this] { run(); }) {}
  ~Poller() { stop(); }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  // Held by whoever else probes the servers, so the poller's connection never adds to theirs
  // (deployments allow 3 connections per client address: maxClientCnxns).
  std::mutex& probing() { return probing_; }

  StepTimeline timeline() {
    std::lock_guard lock(mutex_);
    auto copy = timeline_;
    if (down_since_ && !copy.downtime) copy.downtime = duration_cast<milliseconds>(Clock::now() - *down_since_);
    return copy;
  }

 private:
  void run() {
    while (running_) {
      auto started = Clock::now();
      std::unique_lock probing(probing_);
      probes::ProbeLimits limits;
      limits.deadline = started + milliseconds(300);
      limits.connect_timeout = limits.exchange_timeout = milliseconds(300);
      limits.srvr_only = true;
      auto probed = probes::probe_servers(servers_, limits);
      probing.unlock();
      std::optional<std::string> leader;
      bool name_serving = false;
      for (const auto& probe : probed) {
        auto mode = probes::mode_of(probe);
        if (mode == probes::Mode::leader) leader = probe.address.name;
        if (probe.address.name == name_) name_serving = mode && probes::is_serving(*mode);
      }
      record(started, leader, name_serving);
      std::this_thread::sleep_until(started + milliseconds(100));
    }
  }
  void record(Clock::time_point at, const std::optional<std::string>& leader, bool name_serving) {
    std::lock_guard lock(mutex_);
    if (!name_serving && !down_since_ && !timeline_.downtime) down_since_ = at;
    if (name_serving && down_since_) {
      timeline_.downtime = duration_cast<milliseconds>(at - *down_since_);
      down_since_.reset();
    }
    if (leader) {
      if (!timeline_.leader_before) timeline_.leader_before = leader;
      timeline_.leader_after = leader;
      if (leaderless_since_)
        timeline_.longest_leaderless =
            std::max(timeline_.longest_leaderless, duration_cast<milliseconds>(at - *leaderless_since_));
      leaderless_since_.reset();
    } else if (!leaderless_since_) {
      leaderless_since_ = at;
    }
  }

  std::vector<probes::ServerAddress> servers_;
  std::string name_;
  std::atomic<bool> running_{true};
  std::mutex mutex_;
  std::mutex probing_;
  StepTimeline timeline_;
  std::optional<Clock::time_point> down_since_, leaderless_since_;
  std::thread thread_;
};

std::string summary_line(const StepOptions& options, int command_status, const StepTimeline& timeline,
                         const probes::WatchTotals& totals) {
  std::string leader;
  if (timeline.leader_before && timeline.leader_after && *timeline.leader_before != *timeline.leader_after)
    leader = fmt::format("leader moved {} -> {} ({} without a leader)", *timeline.leader_before, *timeline.leader_after,
                         format_duration(timeline.longest_leaderless));
  else
    leader = fmt::format("leader stayed {}", timeline.leader_after.value_or("-"));
  return fmt::format("step {}: command exited {}; {} down for {}; {}; longest write-unavailability {}; sessions {} kept, {} "
                     "expired; writes {} acknowledged, {} lost",
                     options.restart, command_status, options.restart,
                     timeline.downtime ? format_duration(*timeline.downtime) : "0ms (never seen down)", leader,
                     format_duration(totals.longest_unavailable), totals.sessions - totals.sessions_expired,
                     totals.sessions_expired, totals.writes_acked, totals.writes_lost);
}

nlohmann::json step_json(const StepOptions& options, int status, const StepTimeline& timeline,
                         const std::string& summary) {
  auto optional_ms = [](const std::optional<milliseconds>& value) {
    return value ? nlohmann::json(value->count()) : nlohmann::json(nullptr);
  };
  return {{"server", options.restart},
          {"command_status", status},
          {"downtime_ms", optional_ms(timeline.downtime)},
          {"leader_before", timeline.leader_before.value_or("")},
          {"leader_after", timeline.leader_after.value_or("")},
          {"longest_leaderless_ms", timeline.longest_leaderless.count()},
          {"summary", summary}};
}

class StepCommand final : public Command {
 public:
  std::string_view name() const override { return "step"; }
  CLI::App& add_to(CLI::App& app) override;
  int run(const Context& context) override;

 private:
  EnsembleOptions check_options() const;
  // Before: healthy and safe to restart NAME; otherwise prints why and returns false.
  bool ready_to_restart(const Context& context, LedgerUse& ledger);
  // After: checks until healthy --stable times in a row, data loss, a stop signal or --timeout.
  struct Recovery {
    Report report;
    int healthy_streak = 0;
  };
  Recovery wait_for_recovery(const Context& context, LedgerUse& ledger, Poller& poller) const;
  std::vector<Finding> step_findings(const probes::WatchTotals& totals, const ChildOutcome& outcome,
                                     const Recovery& recovery) const;
  ChildOutcome run_restart_command(const Context& context) const;
  // The ledger after the step: NAME joins the restart round when COMMAND exited 0 and NAME serves again;
  // either way its approval is no longer in flight.
  void record_outcome(const ChildOutcome& outcome, const Report& after) const;
  // SIGINT/SIGTERM: stop at once (COMMAND already got the signal), clean up, say what is known.
  int stop_interrupted(const Context& context, probes::WatchEngine& engine, Poller& poller, const ChildOutcome& outcome);
  void print_result(const Context& context, const Report& result, const ChildOutcome& outcome,
                    const StepTimeline& timeline, const probes::WatchTotals& totals);

  StepOptions options_;
  std::mutex out_mutex_;  // the engine's events and the final report take turns on stdout
};

CLI::App& StepCommand::add_to(CLI::App& app) {
  auto& command = *app.add_subcommand(
      "step", "Wrap one restart: check it is safe, run COMMAND with a watch running, wait until healthy, verify");
  add_servers_option(command, options_.servers);
  command.add_option("--restart", options_.restart, "The server COMMAND restarts, as named in --servers")->required();
  add_duration_option(command, "--timeout", options_.timeout,
                      "How long to wait for the server and the ensemble afterwards (default 10m)");
  add_state_option(command, options_.state_file, "Ledger file, as for quorum --state");
  add_output_option(command, options_.output);
  add_namespace_option(command, options_.namespace_path);
  add_watch_tuning_options(command, options_.tuning);
  command.add_option("COMMAND", options_.command, "After --: the command that restarts the server")->expected(-1);
  command.final_callback([this] {
    require_listed(options_.servers, options_.restart, "--restart ");
    if (options_.command.empty()) throw_usage("no COMMAND after --: what restarts the server?");
  });
  return command;
}

EnsembleOptions StepCommand::check_options() const {
  EnsembleOptions check;
  check.servers = options_.servers;
  check.timeout = options_.check_timeout;
  check.namespace_path = options_.namespace_path;
  check.output = options_.output;
  return check;
}

// The decision and the approval are made under the ledger's lock: a concurrent safe-to-restart or step
// then counts NAME as going down until it is back.
bool StepCommand::ready_to_restart(const Context& context, LedgerUse& ledger) {
  RestartSafety safety;
  auto before = check_and_record(check_options(), ledger, context.keepers, context.err,
                                 [&](const Report& report, Ledger& next) {
                                   safety = restart_safety(report, options_.restart, next.restarted,
                                                           going_down(next, options_.restart, std::chrono::system_clock::now()));
                                   if (report.verdict == Verdict::healthy && safety.safe)
                                     approve_in_flight(next, options_.restart, iso_now());
                                 });
  if (before.verdict == Verdict::healthy && safety.safe) return true;
  context.out << render(before, options_.output);
  context.out << fmt::format("step {}: {}; COMMAND not run\n", options_.restart,
                             before.verdict != Verdict::healthy
                                 ? fmt::format("the ensemble is {} before the step", to_string(before.verdict))
                                 : "not safe to restart: " + safety.reason);
  return false;
}

StepCommand::Recovery StepCommand::wait_for_recovery(const Context& context, LedgerUse& ledger, Poller& poller) const {
  auto give_up = Clock::now() + options_.timeout;
  auto check = check_options();
  Recovery recovery;
  while (true) {
    {
      std::lock_guard exclusive(poller.probing());
      recovery.report = check_and_record(check, ledger, context.keepers, context.err);
    }
    recovery.healthy_streak = recovery.report.verdict == Verdict::healthy ? recovery.healthy_streak + 1 : 0;
    if (recovery.healthy_streak >= options_.stable || Clock::now() + options_.interval >= give_up) break;
    if (std::ranges::any_of(recovery.report.findings, [](const Finding& f) { return f.code == "data-loss"; })) break;
    if (g_stop_requested) break;  // SIGINT/SIGTERM: clean up and report what was seen
    std::this_thread::sleep_for(options_.interval);
  }
  return recovery;
}

std::vector<Finding> StepCommand::step_findings(const probes::WatchTotals& totals, const ChildOutcome& outcome,
                                                const Recovery& recovery) const {
  auto findings = judge_watch(totals, options_.tuning.max_unavailable);
  if (outcome.timed_out)
    findings.push_back({Severity::warning, "command-timed-out", options_.restart,
                        fmt::format("COMMAND ({}) was still running after --timeout {}: its process group got SIGTERM, "
                                    "then SIGKILL if it had not exited; it exited {}",
                                    fmt::join(options_.command, " "), format_duration(options_.timeout), outcome.status)});
  else if (outcome.status != 0)
    findings.push_back({Severity::warning, "command-failed", options_.restart,
                        fmt::format("COMMAND exited {}{}", outcome.status,
                                    outcome.spawn_error.empty() ? "" : ": " + outcome.spawn_error)});
  if (g_stop_requested)
    findings.push_back({Severity::warning, "interrupted", options_.restart, "interrupted by a signal before the end"});
  else if (!outcome.timed_out && recovery.healthy_streak < options_.stable)
    findings.push_back({recovery.report.verdict == Verdict::critical ? Severity::critical : Severity::warning,
                        "not-recovered", options_.restart,
                        fmt::format("the ensemble was not healthy {} times in a row within {}", options_.stable,
                                    format_duration(options_.timeout))});
  return findings;
}

ChildOutcome StepCommand::run_restart_command(const Context& context) const {
  context.err << fmt::format("zkverify step: running: {}\n", fmt::join(options_.command, " "));
  ChildLimits limits;
  limits.deadline = Clock::now() + options_.timeout;
  auto outcome = run_child(options_.command, limits, g_stop_signal);
  if (!outcome.spawn_error.empty()) context.err << "zkverify step: " << outcome.spawn_error << "\n";
  if (outcome.timed_out)
    context.err << fmt::format("zkverify step: COMMAND was still running after {}: terminated (exit {})\n",
                               format_duration(options_.timeout), outcome.status);
  else if (!g_stop_requested)
    context.err << fmt::format("zkverify step: command exited {}; waiting up to {} for {} and the ensemble\n",
                               outcome.status, format_duration(options_.timeout), options_.restart);
  return outcome;
}

void StepCommand::record_outcome(const ChildOutcome& outcome, const Report& after) const {
  if (!options_.state_file) return;
  auto row = std::ranges::find(after.servers, options_.restart, &ServerRow::name);
  bool back = row != after.servers.end() && is_serving(row->state);
  change_ledger(*options_.state_file, options_.check_timeout, iso_now(), [&](Ledger& ledger) {
    if (outcome.status == 0 && !outcome.timed_out && back) record_restarted(ledger, options_.restart, after.servers);
    else ledger.in_flight.erase(options_.restart);
  });
}

int StepCommand::stop_interrupted(const Context& context, probes::WatchEngine& engine, Poller& poller,
                                  const ChildOutcome& outcome) {
  poller.stop();
  engine.stop_quickly(std::chrono::milliseconds(300));
  if (options_.state_file)  // NAME's approval ends with the step; waiting for the lock only briefly
    change_ledger(*options_.state_file, std::chrono::milliseconds(300), iso_now(),
                  [&](Ledger& ledger) { ledger.in_flight.erase(options_.restart); });
  auto signal = g_stop_signal.load();
  auto message = fmt::format("step {}: interrupted by {} while COMMAND ran (passed on to it; it exited {}); the "
                             "ensemble was not checked after it: run zkverify quorum",
                             options_.restart, signal == SIGINT ? "SIGINT" : "SIGTERM", outcome.status);
  std::lock_guard lock(out_mutex_);
  if (options_.output == OutputFormat::json)
    context.out << json_text({{"verdict", "degraded"}, {"interrupted", true}, {"summary", message},
                              {"step", step_json(options_, outcome.status, poller.timeline(), message)},
                              {"watch", to_json(engine.totals())}})
                << "\n";
  else
    context.out << "\n" << message << "\n";
  return kExitDegraded;
}

void StepCommand::print_result(const Context& context, const Report& result, const ChildOutcome& outcome,
                               const StepTimeline& timeline, const probes::WatchTotals& totals) {
  auto summary = summary_line(options_, outcome.status, timeline, totals);
  std::lock_guard lock(out_mutex_);
  if (options_.output == OutputFormat::json) {
    auto json = to_json(result);
    json["step"] = step_json(options_, outcome.status, timeline, summary);
    json["watch"] = to_json(totals);
    context.out << json_text(json) << "\n";
  } else {
    context.out << "\n" << render_text(result) << "\n" << summary << "\n";
  }
}

int StepCommand::run(const Context& context) {
  LedgerUse ledger{options_.state_file, false};
  if (!ready_to_restart(context, ledger)) return kExitDegraded;

  probes::WatchEngine engine(watch_settings(options_.servers, options_.namespace_path, options_.tuning), context.keepers,
                             [&](const probes::WatchEvent& event) {
                               if (options_.output == OutputFormat::json) return;  // one JSON object at the end
                               std::lock_guard lock(out_mutex_);
                               context.out << render_event(event, OutputFormat::text) << std::flush;
                             });
  install_stop_signals();
  if (auto error = engine.start(Clock::now() + options_.check_timeout)) {
    record_outcome(ChildOutcome{127, "not run", false, 0}, Report{});
    context.err << "zkverify step: the watch could not start: " << *error << "; COMMAND not run\n";
    return kExitDegraded;
  }
  Poller poller(options_.servers, options_.restart);
  auto outcome = run_restart_command(context);
  if (g_stop_requested) return stop_interrupted(context, engine, poller, outcome);

  Recovery recovery;
  if (outcome.timed_out) recovery.report = check_and_record(check_options(), ledger, context.keepers, context.err);
  else recovery = wait_for_recovery(context, ledger, poller);
  poller.stop();
  if (g_stop_requested) engine.stop_quickly(std::chrono::milliseconds(300));
  else engine.stop();
  record_outcome(outcome, recovery.report);

  Report result = recovery.report;
  for (auto& finding : step_findings(engine.totals(), outcome, recovery)) result.findings.push_back(std::move(finding));
  finalize(result);
  print_result(context, result, outcome, poller.timeline(), engine.totals());
  return exit_code(result.verdict);
}

}  // namespace

std::unique_ptr<Command> make_step_command() { return std::make_unique<StepCommand>(); }

}  // namespace zkverify::verifier
