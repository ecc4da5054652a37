// step's COMMAND (issue 9, item 1): bounded by the deadline, in a process group of its own that is
// terminated and then killed, and our own stop signal passed on to it.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include "verifier/check/child_process.hpp"

extern char** environ;  // NOLINT: POSIX's, for posix_spawnp

using namespace zkverify;
using namespace zkverify::verifier;
using Catch::Matchers::Contains;
using std::chrono::milliseconds;

namespace {

ChildLimits limits_of(milliseconds deadline, milliseconds grace = milliseconds(5000)) {
  ChildLimits limits;
  limits.deadline = Clock::now() + deadline;
  limits.grace_after_deadline = grace;
  limits.grace_after_signal = grace;
  return limits;
}

// A run with an executor of its own, and no stop signal.
ChildOutcome run_alone(const std::vector<std::string>& argv, const ChildLimits& limits) {
  probes::Executor executor;
  return run_child(executor, argv, limits, executor.stop());
}

// A run during which `signal` is requested of us after `after`.
ChildOutcome run_signalled(const std::vector<std::string>& argv, const ChildLimits& limits, int signal,
                           milliseconds after) {
  probes::Executor executor;
  boost::asio::steady_timer later(executor.io(), after);
  later.async_wait([&](const boost::system::error_code& error) {
    if (!error) executor.stop().request(signal);
  });
  auto outcome = run_child(executor, argv, limits, executor.stop());
  later.cancel();
  return outcome;
}

// A child watched from its spawn on, and `signal` requested of us after `after`.
ChildOutcome watch_signalled(pid_t pid, const ChildLimits& limits, int signal, milliseconds after) {
  probes::Executor executor;
  boost::asio::steady_timer later(executor.io(), after);
  later.async_wait([&](const boost::system::error_code& error) {
    if (!error) executor.stop().request(signal);
  });
  auto outcome = watch_child(executor, pid, "sh", limits, executor.stop());
  later.cancel();
  return outcome;
}

// A shell running `script` in a process group of its own with `ignored` signals ignored from before
// its exec, returned once the script wrote a line to its descriptor 3. Tests of the deadline start
// their clock only then: a `trap` in the script raced a 200 ms deadline on a busy machine (CI on
// 351cfbd: the shell died of the SIGTERM it was about to ignore).
struct ReadyChild {
  pid_t pid = 0;
  std::string line;  // what the script wrote
};
ReadyChild spawn_ready(const std::string& script, std::initializer_list<int> ignored = {}) {
  int ends[2];
  REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
  const char* argv[] = {"sh", "-c", script.c_str(), nullptr};
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // only async-signal-safe calls until the exec
    ::setpgid(0, 0);
    for (int signal : ignored) ::signal(signal, SIG_IGN);
    if (ends[1] == 3) ::fcntl(3, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
    ::dup2(ends[1], 3);
    ::execve("/bin/sh", const_cast<char* const*>(argv), environ);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // the group exists before anyone signals it, whichever of us runs first
  ::close(ends[1]);
  ReadyChild child{pid, {}};
  pollfd readable{ends[0], POLLIN, 0};
  char c = 0;
  while (::poll(&readable, 1, 10000) == 1 && ::read(ends[0], &c, 1) == 1 && c != '\n') child.line += c;
  ::close(ends[0]);
  REQUIRE(c == '\n');
  return child;
}

// Whether process `pid` is gone (or only a zombie nobody reaped yet).
bool gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string ignored, state;
  if (!(stat >> ignored >> ignored >> state)) return true;
  return state == "Z";
}

// Runs `argv` with our stdout and stderr sent to two files for the time of the run; what each got.
std::pair<std::string, std::string> outputs_of(const std::vector<std::string>& argv, const ChildLimits& limits) {
  auto dir = std::filesystem::temp_directory_path();
  auto out_path = dir / ("child-out-" + std::to_string(::getpid()));
  auto err_path = dir / ("child-err-" + std::to_string(::getpid()));
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = ::dup(STDOUT_FILENO), saved_err = ::dup(STDERR_FILENO);
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  auto outcome = run_alone(argv, limits);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  for (int fd : {out, err, saved_out, saved_err}) ::close(fd);
  CHECK(outcome.status == 0);
  auto slurp = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(path);
    return text;
  };
  return {slurp(out_path), slurp(err_path)};
}

}  // namespace

TEST_CASE("child: its stdout is ours, or our stderr when ours carries a JSON report") {
  std::vector<std::string> argv{"sh", "-c", "echo to-stdout; echo to-stderr >&2"};
  auto limits = limits_of(milliseconds(5000));
  auto [out, err] = outputs_of(argv, limits);
  CHECK(out == "to-stdout\n");
  CHECK(err == "to-stderr\n");
  limits.stdout_to_stderr = true;
  std::tie(out, err) = outputs_of(argv, limits);
  CHECK(out.empty());
  CHECK(err == "to-stdout\nto-stderr\n");
}

TEST_CASE("child: inherits no descriptor of ours but stdin, stdout and stderr") {
  // A socket as the C client opens one (not close-on-exec), and a plain file.
  int socket = ::socket(AF_INET, SOCK_STREAM, 0);
  int file = ::open("/dev/null", O_RDONLY);
  REQUIRE(socket > STDERR_FILENO);
  REQUIRE(file > STDERR_FILENO);
  // ls lists what it was started with, and 3: its own handle on the directory it reads.
  auto [out, err] = outputs_of({"ls", "/proc/self/fd"}, limits_of(milliseconds(5000)));
  ::close(socket);
  ::close(file);
  INFO(err);
  CHECK(out == "0\n1\n2\n3\n");
}

TEST_CASE("child: its exit status, or 127 naming what could not run") {
  auto exited = run_alone({"sh", "-c", "exit 3"}, limits_of(milliseconds(30000)));
  CHECK(exited.status == 3);
  CHECK_FALSE(exited.timed_out);
  CHECK(exited.forwarded_signal == 0);

  auto missing = run_alone({"zkverify-no-such-command"}, limits_of(milliseconds(30000)));
  CHECK(missing.status == 127);
  CHECK_THAT(missing.spawn_error, Contains("cannot run zkverify-no-such-command"));
}

TEST_CASE("child: past the deadline its whole process group gets SIGTERM") {
  // The shell waits for a grandchild: both are in the group, both must go.
  auto child = spawn_ready("sleep 60 & echo $! >&3; wait");
  int grandchild = std::stoi(child.line);
  REQUIRE(grandchild > 0);
  probes::Executor executor;
  auto outcome = watch_child(executor, child.pid, "sh", limits_of(milliseconds(300)), executor.stop());
  CHECK(outcome.timed_out);
  CHECK(outcome.status == 128 + SIGTERM);
  for (int i = 0; i < 100 && !gone(grandchild); ++i) std::this_thread::sleep_for(milliseconds(20));
  CHECK(gone(grandchild));
}

TEST_CASE("child: one that ignores SIGTERM is killed after the grace period") {
  auto child = spawn_ready("echo ready >&3; sleep 60", {SIGTERM});
  probes::Executor executor;
  auto outcome =
      watch_child(executor, child.pid, "sh", limits_of(milliseconds(200), milliseconds(300)), executor.stop());
  CHECK(outcome.timed_out);
  CHECK(outcome.status == 128 + SIGKILL);
}

TEST_CASE("child: our stop signal is passed on to it") {
  auto outcome = run_signalled({"sleep", "60"}, limits_of(milliseconds(60000)), SIGINT, milliseconds(300));
  CHECK(outcome.forwarded_signal == SIGINT);
  CHECK_FALSE(outcome.timed_out);
  CHECK(outcome.status == 128 + SIGINT);
}

TEST_CASE("child: our stop signal during the grace after the deadline shortens the wait for SIGKILL") {
  auto child = spawn_ready("echo ready >&3; sleep 60", {SIGTERM, SIGINT});
  auto limits = limits_of(milliseconds(200), milliseconds(60000));
  limits.grace_after_signal = milliseconds(300);
  // After the deadline's SIGTERM, within its grace.
  auto outcome = watch_signalled(child.pid, limits, SIGINT, milliseconds(600));
  CHECK(outcome.timed_out);
  CHECK(outcome.forwarded_signal == SIGINT);  // passed on, and SIGKILL came half a second later
  CHECK(outcome.status == 128 + SIGKILL);
}

TEST_CASE("child: one that exited before its watch was armed is reaped with its status") {
  // Spawned and waited for (without reaping: WNOWAIT) before the watch exists: the pidfd of a zombie
  // reads as exited, so the race between spawn and arming the watch loses nothing.
  pid_t pid = 0;
  const char* argv[] = {"sh", "-c", "exit 7", nullptr};
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  REQUIRE(posix_spawnp(&pid, "sh", nullptr, &attributes, const_cast<char* const*>(argv), environ) == 0);
  posix_spawnattr_destroy(&attributes);
  siginfo_t info{};
  REQUIRE(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0);
  REQUIRE(gone(pid));  // a zombie now

  probes::Executor executor;
  auto outcome = watch_child(executor, pid, "sh", limits_of(milliseconds(60000)), executor.stop());
  CHECK(outcome.status == 7);  // its exit, not the deadline (that would be 128 + SIGTERM)
  CHECK_FALSE(outcome.timed_out);
  CHECK(waitpid(pid, nullptr, WNOHANG) == -1);  // reaped: no child of that pid is left
}
