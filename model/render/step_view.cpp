#include "model/render/step_view.hpp"

#include <fmt/format.h>

#include "model/facts/time_text.hpp"

namespace zkverify {

using std::chrono::milliseconds;

namespace {

std::string leader_text(const StepTimeline& timeline) {
  if (timeline.leader_before && timeline.leader_after && *timeline.leader_before != *timeline.leader_after)
    return fmt::format("leader moved {} -> {} ({} without a leader)", *timeline.leader_before, *timeline.leader_after,
                       format_duration(timeline.longest_leaderless));
  return fmt::format("leader stayed {}", timeline.leader_after.value_or("-"));
}

}  // namespace

std::string render_step_summary(const std::string& server, int command_status, const StepTimeline& timeline,
                                milliseconds longest_unavailable, const WatchTotals& totals) {
  return fmt::format(
      "step {}: command exited {}; {} down for {}; {}; longest write-unavailability {}; sessions {} kept, {} "
      "expired; writes {} acknowledged, {} lost",
      server, command_status, server, timeline.downtime ? format_duration(*timeline.downtime) : "0ms (never seen down)",
      leader_text(timeline), format_duration(longest_unavailable), totals.sessions - totals.sessions_expired,
      totals.sessions_expired, totals.writes_acked, totals.writes_lost);
}

nlohmann::json step_json(const std::string& server, int command_status, const StepTimeline& timeline,
                         const std::string& summary) {
  auto optional_ms = [](const std::optional<milliseconds>& value) {
    return value ? nlohmann::json(value->count()) : nlohmann::json(nullptr);
  };
  return {{"server", server},
          {"command_status", command_status},
          {"downtime_ms", optional_ms(timeline.downtime)},
          {"leader_before", timeline.leader_before.value_or("")},
          {"leader_after", timeline.leader_after.value_or("")},
          {"longest_leaderless_ms", timeline.longest_leaderless.count()},
          {"summary", summary}};
}

}  // namespace zkverify
