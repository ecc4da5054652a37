#include "verifier/commands/step.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "probes/four_letter.hpp"
#include "probes/watch_engine.hpp"
#include "verifier/render/durations.hpp"
#include "verifier/render/text.hpp"
#include "verifier/commands/restart.hpp"
#include "verifier/judge/restart_plan.hpp"
#include "verifier/commands/watch.hpp"

extern char** environ;

namespace zkverify::verifier {

using probes::Clock;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

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
      auto probes = probes::probe_servers(servers_, limits);
      std::optional<std::string> leader;
      bool name_serving = false;
      for (const auto& probe : probes) {
        if (!probe.srvr || probe.srvr->kind != probes::ReplyKind::facts) continue;
        auto mode = probe.srvr->facts.mode;
        if (mode == probes::Mode::leader) leader = probe.address.name;
        if (probe.address.name == name_)
          name_serving = mode == probes::Mode::leader || mode == probes::Mode::follower || mode == probes::Mode::observer;
      }
      probing.unlock();
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
        timeline_.longest_leaderless = std::max(timeline_.longest_leaderless, duration_cast<milliseconds>(at - *leaderless_since_));
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

// Runs COMMAND with our stdin/stdout/stderr; returns its exit status (128+signal when killed).
int run_command(const std::vector<std::string>& command, std::string& error) {
  std::vector<char*> argv;
  for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0) {
    error = fmt::format("cannot run {}: {}", command.front(), std::strerror(rc));
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

QuorumOptions check_options(const StepOptions& options) {
  QuorumOptions check;
  check.servers = options.servers;
  check.timeout = options.check_timeout;
  check.namespace_path = options.namespace_path;
  check.state_file = options.state_file;
  check.output = options.output;
  return check;
}

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

// Everything after the options were checked; throws StateFileError / runtime_error for the state file.
int step_after_validation(const StepOptions& options, const QuorumOptions& check,
                          const std::vector<probes::ServerAddress>& servers, std::ostream& out, std::ostream& err) {
  bool no_reset = false;
  auto before = check_and_record(check, no_reset, err);
  auto safety =
      restart_safety(before, options.restart, restarted_this_round(options.state_file, options.check_timeout));
  if (before.verdict != Verdict::healthy || !safety.safe) {
    out << render(before, options.output);
    out << fmt::format("step {}: {}; COMMAND not run\n", options.restart,
                       before.verdict != Verdict::healthy
                           ? fmt::format("the ensemble is {} before the step", to_string(before.verdict))
                           : "not safe to restart: " + safety.reason);
    return 1;
  }
  if (options.state_file) record_restart(*options.state_file, options.restart, before.servers, options.check_timeout);

  std::mutex out_mutex;
  probes::WatchEngine engine(watch_settings(servers, options.namespace_path, options.tuning), [&](const probes::WatchEvent& event) {
    if (options.output == "json") return;  // one JSON object at the end
    std::lock_guard lock(out_mutex);
    out << render_event(event, "text") << std::flush;
  });
  if (auto error = engine.start(Clock::now() + options.check_timeout)) {
    err << "zkverify step: the watch could not start: " << *error << "; COMMAND not run\n";
    return 1;
  }
  Poller poller(servers, options.restart);
  install_stop_signals();

  err << fmt::format("zkverify step: running: {}\n", fmt::join(options.command, " "));
  std::string spawn_error;
  int status = run_command(options.command, spawn_error);
  if (!spawn_error.empty()) err << "zkverify step: " << spawn_error << "\n";
  err << fmt::format("zkverify step: command exited {}; waiting up to {} for {} and the ensemble\n", status,
                     format_duration(options.timeout), options.restart);

  // After: healthy `stable` times in a row (which includes NAME serving and reading the write back).
  auto give_up = Clock::now() + options.timeout;
  Report after;
  int streak = 0;
  while (true) {
    {
      std::lock_guard exclusive(poller.probing());
      after = check_and_record(check, no_reset, err);
    }
    streak = after.verdict == Verdict::healthy ? streak + 1 : 0;
    if (streak >= options.stable || Clock::now() + options.interval >= give_up) break;
    if (std::ranges::any_of(after.findings, [](const Finding& f) { return f.code == "data-loss"; })) break;
    if (g_stop_requested) break;  // SIGINT/SIGTERM: clean up and report what was seen
    std::this_thread::sleep_for(options.interval);
  }
  poller.stop();
  engine.stop();
  auto totals = engine.totals();
  auto timeline = poller.timeline();

  auto findings = judge_watch(totals, options.tuning.max_unavailable);
  if (status != 0)
    findings.push_back({Severity::warning, "command-failed", options.restart,
                        fmt::format("COMMAND exited {}{}", status, spawn_error.empty() ? "" : ": " + spawn_error)});
  if (g_stop_requested)
    findings.push_back({Severity::warning, "interrupted", options.restart, "interrupted by a signal before the end"});
  else if (streak < options.stable)
    findings.push_back({after.verdict == Verdict::critical ? Severity::critical : Severity::warning, "not-recovered",
                        options.restart,
                        fmt::format("the ensemble was not healthy {} times in a row within {}", options.stable,
                                    format_duration(options.timeout))});
  Report result = after;
  for (auto& finding : findings) result.findings.push_back(std::move(finding));
  finalize(result);

  auto summary = summary_line(options, status, timeline, totals);
  if (options.output == "json") {
    auto json = to_json(result);
    json["step"] = {{"server", options.restart},
                    {"command_status", status},
                    {"downtime_ms", timeline.downtime ? nlohmann::json(timeline.downtime->count()) : nlohmann::json(nullptr)},
                    {"leader_before", timeline.leader_before.value_or("")},
                    {"leader_after", timeline.leader_after.value_or("")},
                    {"longest_leaderless_ms", timeline.longest_leaderless.count()},
                    {"summary", summary}};
    json["watch"] = to_json(totals);
    out << json.dump(2) << "\n";
  } else {
    std::lock_guard lock(out_mutex);
    out << "\n" << render_text(result) << "\n" << summary << "\n";
  }
  return exit_code(result.verdict);
}

}  // namespace

int run_step(const StepOptions& options, std::ostream& out, std::ostream& err) {
  auto check = check_options(options);
  std::vector<probes::ServerAddress> servers;
  try {
    validate(check);
    validate(options.tuning);
    servers = probes::parse_server_list(options.servers);
    if (std::ranges::find(servers, options.restart, &probes::ServerAddress::name) == servers.end())
      throw std::invalid_argument(fmt::format("--restart '{}' is not in --servers", options.restart));
    if (options.command.empty()) throw std::invalid_argument("no COMMAND after --: what restarts the server?");
  } catch (const std::invalid_argument& error) {
    err << "zkverify step: " << error.what() << "\n";
    return kExitUsage;
  }

  try {
    return step_after_validation(options, check, servers, out, err);
  } catch (const std::invalid_argument& error) {  // a state file that is corrupt or locked
    err << "zkverify step: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::runtime_error& error) {  // a state file that could not be written
    err << "zkverify step: " << error.what() << "\n";
    return kExitIoError;
  }
}

}  // namespace zkverify::verifier
