#pragma once
// Time as zkverify reads it: the steady clock for deadlines and durations, and a Moment (both
// clocks read together) where an event is also shown to people. Pure code takes times as arguments.

#include <chrono>

namespace zkverify {

using Clock = std::chrono::steady_clock;

struct Moment {
  Clock::time_point steady;
  std::chrono::system_clock::time_point wall;
};

}  // namespace zkverify
