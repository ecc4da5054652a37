#pragma once
// When a watch engine writes and checks, sans I/O: the writer's next time at its rate, whether a
// check (or a move home) may start, and whether any is still in flight when a stop begins. WatchBook
// says what to write and which checks are wanted; this says when. Fed the time, never reads it.

#include <chrono>

#include "model/facts/clock.hpp"

namespace zkverify {

class WatchCadence {
 public:
  // `rate` writes a second; at most one check every `check_gap`, whatever flaps.
  explicit WatchCadence(double rate, std::chrono::milliseconds check_gap = std::chrono::milliseconds(500));

  // The write after the one due at `due`: an interval later, never before `now` (after a stall,
  // SIGSTOP say, there is no burst to catch up).
  [[nodiscard]] Clock::time_point next_write(Clock::time_point due, Clock::time_point now) const;

  enum class Start { no, now, later };
  struct CheckStart {
    Start start = Start::no;
    Clock::time_point at{};  // for `later`: when to ask again
  };
  // Whether a check starts: not when none is wanted, one runs or the stop began; later when the
  // last ended less than the gap ago; else now (and from then one is running).
  CheckStart check(bool wanted, Clock::time_point now);
  void check_ended(Clock::time_point now);
  // Whether a move home starts (one at a time, none once the stop began); from then one is running.
  bool start_homing();
  void homing_ended();

  // A round of following the clients' registrations (--clients): one at a time. Asked while one runs
  // (a watch fired during it), false, and one more is due when it ends: follow_ended() says so.
  bool start_follow();
  [[nodiscard]] bool follow_ended();

  // From here on nothing starts.
  void stop() { stopped_ = true; }
  [[nodiscard]] bool stopped() const { return stopped_; }
  // A check, a move home or a round of following is in flight: the stop waits for it (up to its bound).
  [[nodiscard]] bool busy() const { return checking_ || homing_ || following_; }

 private:
  Clock::duration interval_;
  std::chrono::milliseconds check_gap_;
  Clock::time_point next_check_{};
  bool checking_ = false;
  bool homing_ = false;
  bool following_ = false;
  bool follow_again_ = false;
  bool stopped_ = false;
};

}  // namespace zkverify
