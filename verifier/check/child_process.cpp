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
#include <boost/asio/strand.hpp>

#include <fmt/format.h>

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

// The child in the executor's hands: its exit (the pidfd readable), its deadline and our stop signal
// are events on one strand; the terminator's escalation is a timer there too.
class ChildWatch : public std::enable_shared_from_this<ChildWatch> {
 public:
  ChildWatch(probes::Executor& executor, pid_t pid, int pidfd, const ChildLimits& limits)
      : strand_(asio::make_strand(executor.io().get_executor())),
        exit_(strand_, pidfd),
        deadline_(strand_),
        kill_(strand_),
        pid_(pid),
        limits_(limits) {}

  std::future<ChildOutcome> start() {
    exit_.async_wait(asio::posix::stream_descriptor::wait_read,
                     [self = shared_from_this()](const boost::system::error_code&) { self->reap(); });
    deadline_.expires_at(limits_.deadline);
    deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      // After our own signal was passed on, the child is already being ended.
      if (!error && self->outcome_.forwarded_signal == 0)
        self->terminate(SIGTERM, self->limits_.grace_after_deadline, true);
    });
    return done_.get_future();
  }
  // Our stop signal, passed on to the child's group (from any thread).
  void forward(int signal) {
    asio::post(strand_, [self = shared_from_this(), signal] {
      if (self->reaped_ || self->outcome_.forwarded_signal != 0) return;
      self->outcome_.forwarded_signal = signal;
      self->terminate(signal, self->limits_.grace_after_signal, false);
    });
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
    kill_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (!error && !self->reaped_) ::kill(-self->pid_, SIGKILL);
    });
  }
  void reap() {
    int status = 0;
    pid_t waited = ::waitpid(pid_, &status, WNOHANG);
    if (waited == 0) {  // readable, yet not exited (should not happen): wait again
      exit_.async_wait(asio::posix::stream_descriptor::wait_read,
                       [self = shared_from_this()](const boost::system::error_code&) { self->reap(); });
      return;
    }
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

  asio::strand<asio::any_io_executor> strand_;
  asio::posix::stream_descriptor exit_;  // owns the pidfd
  asio::steady_timer deadline_, kill_;
  pid_t pid_;
  ChildLimits limits_;
  ChildOutcome outcome_;
  bool reaped_ = false, kill_armed_ = false;
  std::promise<ChildOutcome> done_;
};

}  // namespace

ChildOutcome run_child(probes::Executor& executor, const std::vector<std::string>& argv, const ChildLimits& limits,
                       probes::StopSignals& stop, int nth) {
  ChildOutcome outcome;
  auto pid = spawn_in_own_group(argv, limits.stdout_to_stderr, outcome.spawn_error);
  if (!pid) {
    outcome.status = 127;
    return outcome;
  }
  // The syscall itself: glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage for C++.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0));
  if (pidfd < 0) {  // a kernel before 5.3: the child runs unwatched; end it rather than lose track of it
    ::kill(-*pid, SIGKILL);
    ::waitpid(*pid, nullptr, 0);
    return {127, fmt::format("cannot watch {}: pidfd_open: {}", argv.front(), std::generic_category().message(errno)),
            false, 0};
  }
  auto watch = std::make_shared<ChildWatch>(executor, *pid, pidfd, limits);
  auto result = watch->start();
  probes::StopSubscription forwarding(&stop, [watch, nth](int which, int signal) {
    if (which == nth) watch->forward(signal);
  });
  if (int signal = stop.signal(nth)) watch->forward(signal);  // it came before the subscription
  // The child is SIGKILLed by the later of its two graces at most: this bound is never reached.
  auto bound = std::max(limits.deadline + limits.grace_after_deadline, Clock::now() + limits.grace_after_signal) +
               std::chrono::seconds(5);
  if (result.wait_until(bound) != std::future_status::ready)
    return {127, fmt::format("lost track of {}: it did not exit after SIGKILL", argv.front()), true, 0};
  return result.get();
}

}  // namespace zkverify::verifier
