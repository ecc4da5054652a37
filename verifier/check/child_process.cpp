#include "verifier/check/child_process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace zkverify::verifier {

namespace {


// Starts `argv` as the leader of a new process group, with default SIGINT/SIGTERM handling.
std::optional<pid_t> spawn_in_own_group(const std::vector<std::string>& argv, bool stdout_to_stderr,
                                        std::string& error) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_to_stderr) posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc == 0) return pid;
  error = fmt::format("cannot run {}: {}", argv.front(), std::strerror(rc));
  return std::nullopt;
}

// What to do next to a child that has not exited: nothing yet, terminate or kill its group.
class Terminator {
 public:
  Terminator(pid_t group, const ChildLimits& limits) : group_(group), limits_(limits) {}

  void tick(ChildOutcome& outcome, int stop_signal) {
    auto now = Clock::now();
    if (!terminating_) {
      if (stop_signal != 0) {
        ::kill(-group_, stop_signal);
        outcome.forwarded_signal = stop_signal;
        kill_at_ = now + limits_.grace_after_signal;
        terminating_ = true;
      } else if (now >= limits_.deadline) {
        ::kill(-group_, SIGTERM);
        outcome.timed_out = true;
        kill_at_ = now + limits_.grace_after_deadline;
        terminating_ = true;
      }
    } else if (stop_signal != 0 && outcome.forwarded_signal == 0) {  // ours came during the deadline's grace
      ::kill(-group_, stop_signal);
      outcome.forwarded_signal = stop_signal;
      kill_at_ = std::min(kill_at_, now + limits_.grace_after_signal);
    } else if (!killed_ && now >= kill_at_) {
      ::kill(-group_, SIGKILL);
      killed_ = true;
    }
  }

 private:
  pid_t group_;
  ChildLimits limits_;
  bool terminating_ = false;  // SIGTERM or the forwarded signal was sent
  Clock::time_point kill_at_{};
  bool killed_ = false;
};

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits,
                       const std::atomic<int>& stop_signal) {
  ChildOutcome outcome;
  auto pid = spawn_in_own_group(argv, limits.stdout_to_stderr, outcome.spawn_error);
  if (!pid) {
    outcome.status = 127;
    return outcome;
  }
  Terminator terminator(*pid, limits);
  int status = 0;
  while (true) {
    pid_t waited = waitpid(*pid, &status, WNOHANG);
    if (waited == *pid) break;
    if (waited < 0 && errno != EINTR) {  // not ours to wait for any more: nothing to report
      outcome.status = 127;
      outcome.spawn_error = fmt::format("lost track of {}: {}", argv.front(), std::strerror(errno));
      return outcome;
    }
    terminator.tick(outcome, stop_signal.load());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

}  // namespace zkverify::verifier
