#include "verifier/check/child_process.hpp"

#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <system_error>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <fmt/format.h>

#include "probes/actor.hpp"

extern char** environ;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): POSIX's, for posix_spawnp

namespace zkverify::verifier {

namespace {

namespace asio = boost::asio;

// Starts `argv` as the leader of a new process group, with default SIGINT/SIGTERM handling, and
// none of our descriptors but 0, 1 and 2: the C client's sockets are not close-on-exec, and a
// COMMAND that starts a long-lived process (a server, a port-forward) would hold our connections
// open after we closed them, where the server counts them against maxClientCnxns.
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
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc == 0) return pid;
  error = fmt::format("cannot run {}: {}", argv.front(), std::generic_category().message(rc));
  return std::nullopt;
}

// The child in the executor's hands, as an actor (probes/actor.hpp): its exit (the pidfd readable),
// its deadline and our stop signal are events on its strand; the terminator's escalation is a timer
// there too. A child that exits before the watch is armed is not missed: until we reap it, it stays
// a zombie and its pidfd reads as exited.
class ChildWatch : public probes::ActorCore {
 public:
  ChildWatch(probes::Executor& executor, pid_t pid, int pidfd, const ChildLimits& limits)
      : ActorCore(executor), exit_(strand(), pidfd), deadline_(strand()), kill_(strand()), pid_(pid), limits_(limits) {}

  // On the strand.
  void start() {
    wait_for_exit();
    deadline_.expires_at(limits_.deadline);
    deadline_.async_wait([self = shared(), task = task()](const boost::system::error_code& error) {
      // After our own signal was passed on, the child is already being ended.
      if (!error && self->outcome_.forwarded_signal == 0)
        self->terminate(SIGTERM, self->limits_.grace_after_deadline, true);
    });
  }
  std::future<ChildOutcome> outcome() { return done_.get_future(); }
  // Our stop signal, passed on to the child's group (on the strand).
  void forward(int signal) {
    if (reaped_ || outcome_.forwarded_signal != 0) return;
    outcome_.forwarded_signal = signal;
    terminate(signal, limits_.grace_after_signal, false);
  }

 private:
  // The signal to the group, then SIGKILL after `grace` (the earlier of two such, when both come).
  void terminate(int signal, std::chrono::milliseconds grace, bool deadline) {
    if (reaped_) return;
    ::kill(-pid_, signal);
    if (deadline) outcome_.timed_out = true;
    auto kill_at = Clock::now() + grace;
    if (kill_armed_ && kill_.expiry() <= kill_at) return;
    kill_armed_ = true;
    kill_.expires_at(kill_at);
    kill_.async_wait([self = shared(), task = task()](const boost::system::error_code& error) {
      if (!error && !self->reaped_) ::kill(-self->pid_, SIGKILL);
    });
  }
  std::shared_ptr<ChildWatch> shared() { return std::static_pointer_cast<ChildWatch>(shared_from_this()); }
  void wait_for_exit() {
    exit_.async_wait(asio::posix::stream_descriptor::wait_read,
                     [self = shared(), task = task()](const boost::system::error_code&) { self->reap(); });
  }
  void reap() {
    int status = 0;
    pid_t waited = ::waitpid(pid_, &status, WNOHANG);
    if (waited == 0) return wait_for_exit();  // readable, yet not exited (should not happen): wait again
    reaped_ = true;
    deadline_.cancel();
    kill_.cancel();
    if (waited < 0) {
      outcome_.status = 127;
      outcome_.spawn_error = fmt::format("lost track of the child: {}", std::generic_category().message(errno));
    } else {
      outcome_.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    done_.set_value(outcome_);
  }

  asio::posix::stream_descriptor exit_;  // owns the pidfd
  asio::steady_timer deadline_, kill_;
  pid_t pid_;
  ChildLimits limits_;
  ChildOutcome outcome_;
  bool reaped_ = false, kill_armed_ = false;
  std::promise<ChildOutcome> done_;
};

}  // namespace

ChildOutcome watch_child(probes::Executor& executor, pid_t pid, const std::string& what, const ChildLimits& limits,
                         probes::StopSignals& stop, int nth) {
  // The syscall itself: glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage for C++.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {  // a kernel before 5.3: the child runs unwatched; end it rather than lose track of it
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return {127, fmt::format("cannot watch {}: pidfd_open: {}", what, std::generic_category().message(errno)), false,
            0};
  }
  auto watch = std::make_shared<ChildWatch>(executor, pid, pidfd, limits);
  auto result = watch->outcome();
  probes::tell(watch, [](ChildWatch& self) { self.start(); });
  probes::StopSubscription forwarding(&stop, [watch, nth](int which, int signal) {
    if (which == nth) probes::tell(watch, [signal](ChildWatch& self) { self.forward(signal); });
  });
  if (int signal = stop.signal(nth))  // it came before the subscription
    probes::tell(watch, [signal](ChildWatch& self) { self.forward(signal); });
  // The child is SIGKILLed by the later of its two graces at most: this bound is never reached.
  auto bound = std::max(limits.deadline + limits.grace_after_deadline, Clock::now() + limits.grace_after_signal) +
               std::chrono::seconds(5);
  if (result.wait_until(bound) != std::future_status::ready)
    return {127, fmt::format("lost track of {}: it did not exit after SIGKILL", what), true, 0};
  return result.get();
}

ChildOutcome run_child(probes::Executor& executor, const std::vector<std::string>& argv, const ChildLimits& limits,
                       probes::StopSignals& stop, int nth) {
  ChildOutcome outcome;
  auto pid = spawn_in_own_group(argv, limits.stdout_to_stderr, outcome.spawn_error);
  if (!pid) {
    outcome.status = 127;
    return outcome;
  }
  return watch_child(executor, *pid, argv.front(), limits, stop, nth);
}

}  // namespace zkverify::verifier
