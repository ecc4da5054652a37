#include "verifier/check/restart_step.hpp"

#include <csignal>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"
#include "probes/four_letter.hpp"
#include "model/facts/time_text.hpp"
#include "verifier/store/ledger_file.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

// Polls srvr on every server ten times a second: when NAME stopped and started serving, and how
// long the ensemble had no leader.
class Poller {
 public:
  Poller(std::vector<ServerAddress> servers, std::string name, std::optional<std::string> leader_before)
      : servers_(std::move(servers)), name_(std::move(name)) {
    timeline_.leader_before = timeline_.leader_after = std::move(leader_before);
    thread_ = std::thread([this] { run(); });
  }
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
    auto now = Clock::now();
    if (down_since_ && (!copy.downtime || now - *down_since_ > *copy.downtime)) {  // still down
      copy.downtime = duration_cast<milliseconds>(now - *down_since_);
      copy.down_window = {{*down_since_, now}};
    }
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
      bool name_serving = false, someone_follows = false;
      std::optional<std::int64_t> name_received;
      for (const auto& probe : probed) {
        auto mode = mode_of(probe);
        if (mode == Mode::leader) leader = probe.address.name;
        if (mode == Mode::follower || mode == Mode::observer) someone_follows = true;
        if (probe.address.name != name_) continue;
        name_serving = mode && is_serving(*mode);
        if (has_facts(probe.srvr)) name_received = probe.srvr->facts.received;
      }
      note_restart(name_serving, name_received);
      // A server follows only while a leader holds a quorum: when the leader's own srvr did not
      // answer (its maxClientCnxns, a slow reply), the ensemble still has one, unseen.
      record(started, leader, !leader && someone_follows, name_serving);
      std::this_thread::sleep_until(started + milliseconds(100));
    }
  }
  // Two polls in a row (200 ms) without NAME serving: one refused connection is not a restart.
  void note_restart(bool name_serving, std::optional<std::int64_t> received) {
    std::lock_guard lock(mutex_);
    polls_not_serving_ = name_serving ? 0 : polls_not_serving_ + 1;
    bool counter_fell = received && last_received_ && *received < *last_received_;
    if (polls_not_serving_ >= 2 || counter_fell) timeline_.restart_seen = true;
    if (received) last_received_ = received;
  }
  void record(Clock::time_point at, const std::optional<std::string>& leader, bool leader_unseen, bool name_serving) {
    std::lock_guard lock(mutex_);
    // The longest time NAME did not serve: a single missed probe before the restart (a refused
    // connection) must not stand for the outage.
    if (!name_serving && !down_since_) down_since_ = at;
    if (name_serving && down_since_) {
      if (!timeline_.downtime || at - *down_since_ > *timeline_.downtime) {
        timeline_.downtime = duration_cast<milliseconds>(at - *down_since_);
        timeline_.down_window = {{*down_since_, at}};
      }
      down_since_.reset();
    }
    if (leader_unseen) return;
    if (leader) {
      if (!timeline_.leader_before) timeline_.leader_before = leader;
      timeline_.leader_after = leader;
      if (leaderless_since_ && at - *leaderless_since_ > timeline_.longest_leaderless) {
        timeline_.longest_leaderless = duration_cast<milliseconds>(at - *leaderless_since_);
        timeline_.leaderless_window = {{*leaderless_since_, at}};
      }
      leaderless_since_.reset();
    } else if (!leaderless_since_) {
      leaderless_since_ = at;
    }
  }

  std::vector<ServerAddress> servers_;
  std::string name_;
  std::atomic<bool> running_{true};
  std::mutex mutex_;
  std::mutex probing_;
  StepTimeline timeline_;
  std::optional<Clock::time_point> down_since_, leaderless_since_;
  int polls_not_serving_ = 0;
  std::optional<std::int64_t> last_received_;
  std::thread thread_;
};

struct Recovery {
  Report report;
  int healthy_streak = 0;
};

// Checks until healthy plan.stable times in a row, data loss, an interruption or plan.timeout.
Recovery wait_for_recovery(const StepPlan& plan, LedgerUse& ledger, const Context& context, Poller& poller) {
  auto give_up = Clock::now() + plan.timeout;
  auto check = check_options(plan);
  Recovery recovery;
  bool said_waiting = false;
  while (true) {
    {
      std::lock_guard exclusive(poller.probing());
      recovery.report = check_and_record(check, ledger, context.keepers, context.err);
    }
    // Healthy checks count only once the restart was seen: before it, the old process answers.
    bool restart_seen = poller.timeline().restart_seen;
    if (!restart_seen && !said_waiting) {
      context.err << "zkverify: waiting to see " << plan.restart
                  << " restart: checks count once it was seen down or its srvr Received count fell\n";
      said_waiting = true;
    }
    bool counts = recovery.report.verdict == Verdict::healthy && restart_seen;
    recovery.healthy_streak = counts ? recovery.healthy_streak + 1 : 0;
    if (recovery.healthy_streak >= plan.stable || Clock::now() + plan.interval >= give_up) break;
    if (std::ranges::any_of(recovery.report.findings, [](const Finding& f) { return f.code == FindingCode::data_loss; })) break;
    if (*plan.interrupt != 0) break;  // clean up and report what was seen
    std::this_thread::sleep_for(plan.interval);
  }
  return recovery;
}

ChildOutcome run_command(const StepPlan& plan, const Context& context) {
  context.err << fmt::format("zkverify: {}: running: {}\n", plan.restart, fmt::join(plan.command, " "));
  ChildLimits limits;
  limits.deadline = Clock::now() + plan.timeout;
  limits.stdout_to_stderr = plan.command_stdout_to_stderr;
  auto outcome = run_child(plan.command, limits, *plan.interrupt);
  if (!outcome.spawn_error.empty()) context.err << "zkverify: " << outcome.spawn_error << "\n";
  if (outcome.timed_out)
    context.err << fmt::format("zkverify: {}: COMMAND was still running after {}: terminated (exit {})\n", plan.restart,
                               format_duration(plan.timeout), outcome.status);
  else if (*plan.interrupt == 0)
    context.err << fmt::format("zkverify: {}: command exited {}; waiting up to {} for {} and the ensemble\n",
                               plan.restart, outcome.status, format_duration(plan.timeout), plan.restart);
  return outcome;
}

void record_outcome(const StepPlan& plan, const StepRun& run, const Context& context) {
  if (!plan.state_file) return;
  auto row = std::ranges::find(run.report.servers, plan.restart, &ServerRow::name);
  bool back = row != run.report.servers.end() && is_serving(row->state);
  bool done = run.outcome.status == 0 && !run.outcome.timed_out && !run.interrupted && back && run.timeline.restart_seen;
  // After an interruption the lock is waited for only briefly: the step must end within a second.
  auto wait = run.interrupted ? milliseconds(300) : plan.check_timeout;
  try {
    change_ledger(*plan.state_file, wait, iso_now(), [&](Ledger& ledger) {
      if (done) record_restarted(ledger, plan.restart, run.report.servers);
      else ledger.in_flight.erase(plan.restart);
    });
  } catch (const Error& error) {  // the step's report still matters more than this record
    context.err << "zkverify: " << plan.restart << ": the ledger was not updated after the step: " << error.what()
                << "\n";
  }
}

}  // namespace

EnsembleOptions check_options(const StepPlan& plan) {
  EnsembleOptions check;
  check.servers = plan.servers;
  check.timeout = plan.check_timeout;
  check.namespace_path = plan.namespace_path;
  return check;
}

StepDecision decide_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context,
                            const ServerChooser& choose) {
  StepDecision decision;
  decision.report = check_and_record(check_options(plan), ledger, context.keepers, context.err,
                                     [&](const Report& report, Ledger& next) {
                                       decision.server = choose(report, next);
                                       if (!decision.server) return;
                                       auto now = std::chrono::system_clock::now();
                                       decision.safety = restart_safety(report, *decision.server, next.restarted,
                                                                        going_down(next, *decision.server, now));
                                       if (report.verdict == Verdict::healthy && decision.safety.safe)
                                         approve_in_flight(next, report, *decision.server, iso8601(now));
                                     });
  return decision;
}

StepRun run_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context) {
  StepRun run;
  run.started = Clock::now();
  Poller poller(plan.servers, plan.restart, plan.leader_before);
  if (*plan.interrupt != 0) {  // stopped before COMMAND could start: do not start it
    run.outcome = {127, "not run: interrupted", false, *plan.interrupt};
    run.interrupted = true;
  } else {
    run.outcome = run_command(plan, context);
    run.interrupted = *plan.interrupt != 0;
  }
  if (!run.interrupted) {
    Recovery recovery;
    if (run.outcome.timed_out) {
      std::lock_guard exclusive(poller.probing());  // never a connection more than the checks need
      recovery.report = check_and_record(check_options(plan), ledger, context.keepers, context.err);
    }
    else recovery = wait_for_recovery(plan, ledger, context, poller);
    run.report = std::move(recovery.report);
    run.healthy_streak = recovery.healthy_streak;
    run.interrupted = *plan.interrupt != 0;
  }
  poller.stop();
  run.timeline = poller.timeline();
  run.ended = Clock::now();
  record_outcome(plan, run, context);
  return run;
}

void forget_approval(const StepPlan& plan, const std::string& server) {
  if (plan.state_file)
    change_ledger(*plan.state_file, plan.check_timeout, iso_now(), [&](Ledger& ledger) { ledger.in_flight.erase(server); });
}

std::vector<Finding> step_findings(const StepPlan& plan, const StepRun& run) {
  std::vector<Finding> findings;
  const auto& outcome = run.outcome;
  if (outcome.timed_out)
    findings.push_back({Severity::warning, FindingCode::command_timed_out, plan.restart,
                        fmt::format("COMMAND ({}) was still running after --timeout {}: its process group got SIGTERM, "
                                    "then SIGKILL if it had not exited; it exited {}",
                                    fmt::join(plan.command, " "), format_duration(plan.timeout), outcome.status)});
  else if (outcome.status != 0)
    findings.push_back({Severity::warning, FindingCode::command_failed, plan.restart,
                        fmt::format("COMMAND exited {}{}", outcome.status,
                                    outcome.spawn_error.empty() ? "" : ": " + outcome.spawn_error)});
  if (run.interrupted)
    findings.push_back({Severity::warning, FindingCode::interrupted, plan.restart, "interrupted by a signal before the end"});
  else if (!outcome.timed_out && !run.timeline.restart_seen)
    findings.push_back({Severity::warning, FindingCode::not_restarted, plan.restart,
                        fmt::format("{} was never seen down and its srvr Received count never fell within {}: COMMAND "
                                    "exited {} without restarting it, or returned before it stopped (use a COMMAND "
                                    "that waits for the server to stop)",
                                    plan.restart, format_duration(plan.timeout), outcome.status)});
  else if (!outcome.timed_out && run.healthy_streak < plan.stable)
    findings.push_back({run.report.verdict == Verdict::critical ? Severity::critical : Severity::warning,
                        FindingCode::not_recovered, plan.restart,
                        fmt::format("the ensemble was not healthy {} times in a row within {}", plan.stable,
                                    format_duration(plan.timeout))});
  return findings;
}

std::string step_summary(const std::string& server, const StepRun& run, milliseconds longest_unavailable,
                         const WatchTotals& totals) {
  const auto& timeline = run.timeline;
  std::string leader;
  if (timeline.leader_before && timeline.leader_after && *timeline.leader_before != *timeline.leader_after)
    leader = fmt::format("leader moved {} -> {} ({} without a leader)", *timeline.leader_before, *timeline.leader_after,
                         format_duration(timeline.longest_leaderless));
  else
    leader = fmt::format("leader stayed {}", timeline.leader_after.value_or("-"));
  return fmt::format("step {}: command exited {}; {} down for {}; {}; longest write-unavailability {}; sessions {} kept, {} "
                     "expired; writes {} acknowledged, {} lost",
                     server, run.outcome.status, server,
                     timeline.downtime ? format_duration(*timeline.downtime) : "0ms (never seen down)", leader,
                     format_duration(longest_unavailable), totals.sessions - totals.sessions_expired,
                     totals.sessions_expired, totals.writes_acked, totals.writes_lost);
}

nlohmann::json step_json(const std::string& server, const StepRun& run, const std::string& summary) {
  auto optional_ms = [](const std::optional<milliseconds>& value) {
    return value ? nlohmann::json(value->count()) : nlohmann::json(nullptr);
  };
  return {{"server", server},
          {"command_status", run.outcome.status},
          {"downtime_ms", optional_ms(run.timeline.downtime)},
          {"leader_before", run.timeline.leader_before.value_or("")},
          {"leader_after", run.timeline.leader_after.value_or("")},
          {"longest_leaderless_ms", run.timeline.longest_leaderless.count()},
          {"summary", summary}};
}

}  // namespace zkverify::verifier
