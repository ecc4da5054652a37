#pragma once
// The sidecar's cycles, sans I/O (a book of judged cycles, so it sits with the judge): each cycle's
// result replaces the last, what changed becomes log lines, and the time says when the next cycle
// is due and whether the loop is alive. The driver (verifier/commands/serve) runs the cycles; the
// pages read the status.

#include <chrono>
#include <string>
#include <vector>

#include "model/facts/clock.hpp"
#include "model/judge/sidecar_status.hpp"

namespace zkverify {

class SidecarBook {
 public:
  // `ensemble` names the ensemble in the metrics (SidecarStatus::ensemble).
  SidecarBook(std::string local, std::chrono::milliseconds interval, std::chrono::milliseconds timeout,
              Clock::time_point started, std::string ensemble = {});

  // A cycle started at `started` ended at `now` with `result`; returns the log lines of what changed
  // (the first cycle: its readiness, leader and verdict).
  std::vector<std::string> cycle_ended(CycleResult result, Clock::time_point now);
  // When the cycle after one that started at `started` is due.
  [[nodiscard]] Clock::time_point next_cycle(Clock::time_point started) const { return started + interval_; }
  // /livez: a cycle ended (or the loop started) within 3 intervals + the timeout.
  [[nodiscard]] bool alive(Clock::time_point now) const;
  [[nodiscard]] const SidecarStatus& status() const { return status_; }

 private:
  SidecarStatus status_;
  std::chrono::milliseconds interval_, timeout_;
  Clock::time_point last_cycle_end_;
};

}  // namespace zkverify
