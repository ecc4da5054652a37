#pragma once
// Running the COMMAND that step (and roll) wrap: bounded by a deadline, stopped on our own stop signal.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "model/facts/clock.hpp"
#include "probes/executor.hpp"

namespace zkverify::verifier {

struct ChildOutcome {
  int status = 0;            // its exit status; 128 + the signal when a signal ended it; 127 when it never ran
  std::string spawn_error;   // why it never ran
  bool timed_out = false;    // it ran past the deadline and was terminated
  int forwarded_signal = 0;  // our stop signal, passed on to it
};

struct ChildLimits {
  Clock::time_point deadline;
  // After the deadline: SIGTERM to its process group, SIGKILL this much later.
  std::chrono::milliseconds grace_after_deadline{5000};
  // After our own stop signal was passed on: SIGKILL this much later (we stop within a second).
  std::chrono::milliseconds grace_after_signal{500};
  // The child's stdout is our stderr (our stdout carries a JSON report); otherwise our stdout.
  bool stdout_to_stderr = false;
};

// Runs `argv` (argv[0] looked up in PATH) with our stdin/stdout/stderr (but see
// ChildLimits::stdout_to_stderr), in a process group of its own so that whatever it starts can be
// terminated with it, until it exits or `limits` end it. The `nth` stop signal to us (SIGINT or
// SIGTERM; also one that came before) is passed on to its group. Its exit is an event on the
// executor (a pidfd), as are the deadlines: the calling thread only waits.
ChildOutcome run_child(probes::Executor& executor, const std::vector<std::string>& argv, const ChildLimits& limits,
                       probes::StopSignals& stop, int nth = 1);

// run_child's second half: watches `pid`, a child of ours in a process group of its own named
// `what` in messages, until it exits (also when it exited before this was called and is not reaped
// yet) or `limits` end it, and reaps it.
ChildOutcome watch_child(probes::Executor& executor, pid_t pid, const std::string& what, const ChildLimits& limits,
                         probes::StopSignals& stop, int nth = 1);

}  // namespace zkverify::verifier
