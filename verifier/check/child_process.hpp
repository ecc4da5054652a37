#pragma once
// Running the COMMAND that step (and roll) wrap: bounded by a deadline, stopped on our own stop signal.

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "probes/keeper.hpp"  // Clock

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
// ChildLimits::stdout_to_stderr), in a process group of its own
// so that whatever it starts can be terminated with it, until it exits or `limits` end it. While it
// runs, `stop_signal` turning non-zero (SIGINT/SIGTERM to us) is passed on to its group.
ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits,
                       const std::atomic<int>& stop_signal);

}  // namespace zkverify::verifier
