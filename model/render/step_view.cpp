#include "model/render/step_view.hpp"

#include <fmt/format.h>

#include "model/facts/time_text.hpp"

namespace zkverify {

using std::chrono::milliseconds;

namespace {

// "(690ms without a leader, 400ms of it unobserved)": how long no leader was seen, and how much of
// that no poll could tell either way.
std::string leaderless_text(const StepTimeline& timeline) {
  if (timeline.leaderless_unobserved.count() == 0)
    return fmt::format("{} without a leader", format_duration(timeline.longest_leaderless));
  return fmt::format("{} without a leader, {} of it unobserved", format_duration(timeline.longest_leaderless),
                     format_duration(timeline.leaderless_unobserved));
}

std::string leader_text(const StepTimeline& timeline) {
  if (timeline.leader_before && timeline.leader_after && *timeline.leader_before != *timeline.leader_after)
    return fmt::format("leader moved {} -> {} ({})", *timeline.leader_before, *timeline.leader_after,
                       leaderless_text(timeline));
  if (timeline.longest_leaderless.count() > 0)
    return fmt::format("leader stayed {} ({})", timeline.leader_after.value_or("-"), leaderless_text(timeline));
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
          {"leaderless_unobserved_ms", timeline.leaderless_unobserved.count()},
          {"summary", summary}};
}

}  // namespace zkverify
