#include "model/judge/sidecar_book.hpp"

#include <utility>

#include "model/judge/readiness.hpp"

namespace zkverify {

SidecarBook::SidecarBook(std::string local, std::chrono::milliseconds interval, std::chrono::milliseconds timeout,
                         Clock::time_point started, std::string ensemble)
    : interval_(interval), timeout_(timeout), last_cycle_end_(started) {
  status_.local = std::move(local);
  status_.ensemble = std::move(ensemble);
}

std::vector<std::string> SidecarBook::cycle_ended(CycleResult result, Clock::time_point now) {
  auto& last = status_.last;
  auto changes = describe_changes(last ? &last->report : nullptr, last ? &last->readiness : nullptr, result.report,
                                  result.readiness);
  last = std::move(result);
  ++status_.cycles;
  last_cycle_end_ = now;
  return changes;
}

bool SidecarBook::alive(Clock::time_point now) const { return is_alive(last_cycle_end_, now, interval_, timeout_); }

}  // namespace zkverify
