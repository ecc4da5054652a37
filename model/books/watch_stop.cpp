#include "model/books/watch_stop.hpp"

#include <algorithm>

namespace zkverify {

using std::chrono::milliseconds;

std::string_view to_string(StopStage stage) {
  switch (stage) {
    case StopStage::quiesce: return "quiesce";
    case StopStage::settle: return "settle";
    case StopStage::final_checks: return "final_checks";
    case StopStage::close_sessions: return "close_sessions";
    case StopStage::remove_znodes: return "remove_znodes";
    case StopStage::deliver: return "deliver";
    case StopStage::done: return "done";
  }
  return "unknown";
}

WatchStop::WatchStop(StopPlan plan) : plan_(plan), stage_(StopStage::quiesce) {}

bool WatchStop::runs(StopStage stage) const {
  switch (stage) {
    case StopStage::settle:
    case StopStage::final_checks: return plan_.running && plan_.final_checks;
    case StopStage::remove_znodes: return plan_.created;
    default: return true;
  }
}

// The bounds are those each stage's own waits already have: a check's steps (its ephemerals, a
// read-back's connect, reads and close) take a request timeout each; removing connects a session,
// removes within the same deadline, then closes it. The sink returns at once (it hands text over),
// so delivering is bounded like a cleanup step, never under a second: a busy machine is no bug.
milliseconds WatchStop::bound_of(StopStage stage) const {
  auto request = plan_.request_timeout;
  auto cleanup = plan_.cleanup_limit.value_or(request);
  switch (stage) {
    case StopStage::quiesce: return 4 * request;
    case StopStage::settle: return request;
    case StopStage::final_checks: return 4 * request;
    case StopStage::close_sessions: return cleanup;
    case StopStage::remove_znodes: return 2 * cleanup;
    case StopStage::deliver: return std::max(cleanup, milliseconds(1000));
    case StopStage::done: return milliseconds(0);
  }
  return milliseconds(0);
}

milliseconds WatchStop::total_bound() const {
  milliseconds total{0};
  for (auto stage = StopStage::quiesce; stage != StopStage::done; stage = next_after(stage))
    if (runs(stage)) total += bound_of(stage);
  return total;
}

StopStage WatchStop::next_after(StopStage stage) const {
  auto next = static_cast<StopStage>(static_cast<int>(stage) + 1);
  while (next != StopStage::done && !runs(next)) next = static_cast<StopStage>(static_cast<int>(next) + 1);
  return next;
}

StopStage WatchStop::advance(bool in_time) {
  if (finished()) return stage_;
  if (!in_time) abandoned_.push_back(stage_);
  stage_ = next_after(stage_);
  return stage_;
}

}  // namespace zkverify
