#include "model/books/watch_cadence.hpp"

#include <algorithm>
#include <utility>

namespace zkverify {

WatchCadence::WatchCadence(double rate, std::chrono::milliseconds check_gap)
    : interval_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate))),
      check_gap_(check_gap) {}

Clock::time_point WatchCadence::next_write(Clock::time_point due, Clock::time_point now) const {
  return std::max(due + interval_, now);
}

WatchCadence::CheckStart WatchCadence::check(bool wanted, Clock::time_point now) {
  if (stopped_ || checking_ || !wanted) return {};
  if (now < next_check_) return {Start::later, next_check_};
  checking_ = true;
  return {Start::now, now};
}

void WatchCadence::check_ended(Clock::time_point now) {
  checking_ = false;
  next_check_ = now + check_gap_;
}

bool WatchCadence::start_homing() {
  if (stopped_ || homing_) return false;
  homing_ = true;
  return true;
}

void WatchCadence::homing_ended() { homing_ = false; }

bool WatchCadence::start_follow() {
  if (stopped_) return false;
  if (following_) {
    follow_again_ = true;
    return false;
  }
  following_ = true;
  return true;
}

bool WatchCadence::follow_ended() {
  following_ = false;
  return std::exchange(follow_again_, false) && !stopped_;
}

}  // namespace zkverify
