#pragma once
// What a watch engine's stop must still do, sans I/O: its stages in order, which of them this run
// needs, and each one's bound. The engine (probes/watch_engine) runs them on its strand, one at a
// time; a stage that has not ended by its bound is abandoned (what it started ends later, on what it
// owns) and the next begins. So the whole stop is bounded by the sum of the bounds, which is what
// the command waits for.

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

namespace zkverify {

enum class StopStage {
  quiesce,         // the writer and the check timers end; a check or a move home in flight finishes
  settle,          // writes in flight are acknowledged or fail
  final_checks,    // every live session's ephemeral, then a read-back through every server
  close_sessions,  // the servers delete the session nodes
  remove_znodes,   // the counters, a closed-late session's node, the run's node
  deliver,         // the sink has seen every event
  done,
};

std::string_view to_string(StopStage stage);

// What the run got to before its stop, and the limits it was given.
struct StopPlan {
  bool running = false;      // start() succeeded: there are writes to settle and read back
  bool final_checks = true;  // stop(); stop_quickly() skips settling and the final checks
  bool created = false;      // start() sent a create: there may be znodes to remove
  std::chrono::milliseconds request_timeout{3000};
  std::optional<std::chrono::milliseconds> cleanup_limit;  // stop_quickly()'s, for closing and removing
};

class WatchStop {
 public:
  explicit WatchStop(StopPlan plan);

  [[nodiscard]] StopStage stage() const { return stage_; }
  [[nodiscard]] bool finished() const { return stage_ == StopStage::done; }
  // The current stage's bound (zero once done).
  [[nodiscard]] std::chrono::milliseconds bound() const { return bound_of(stage_); }
  // Every stage this plan runs, bounds added: the longest the whole stop can take.
  [[nodiscard]] std::chrono::milliseconds total_bound() const;
  // The current stage ended, by itself (`in_time`) or at its bound; the next one this plan runs begins.
  StopStage advance(bool in_time);
  // The stages that were abandoned at their bound, in order.
  [[nodiscard]] const std::vector<StopStage>& abandoned() const { return abandoned_; }

 private:
  [[nodiscard]] bool runs(StopStage stage) const;
  [[nodiscard]] std::chrono::milliseconds bound_of(StopStage stage) const;
  [[nodiscard]] StopStage next_after(StopStage stage) const;

  StopPlan plan_;
  StopStage stage_;
  std::vector<StopStage> abandoned_;
};

}  // namespace zkverify
