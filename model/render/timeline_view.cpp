#include "model/render/timeline_view.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace zkverify {

namespace {

// Milliseconds from the origin, to a tenth.
double ms_from(Clock::time_point origin, Clock::time_point at) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(at - origin).count();
  return std::round(static_cast<double>(micros) / 100.0) / 10.0;
}

}  // namespace

Timeline timeline_of(Clock::time_point origin, const std::vector<ServerProbe>& probes,
                     const std::optional<RoundTrip>& round_trip) {
  Timeline timeline{origin, {}};
  for (const auto& probe : probes) timeline.steps.insert(timeline.steps.end(), probe.steps.begin(), probe.steps.end());
  if (round_trip) timeline.steps.insert(timeline.steps.end(), round_trip->steps.begin(), round_trip->steps.end());
  std::ranges::stable_sort(timeline.steps, [](const TimedStep& a, const TimedStep& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  return timeline;
}

std::string render_timeline_text(const Timeline& timeline) {
  std::size_t width = 1;
  for (const auto& step : timeline.steps) width = std::max(width, step.server.size());
  std::string text = "timeline (ms from the start): start - end  took  server  step\n";
  for (const auto& step : timeline.steps) {
    auto start = ms_from(timeline.origin, step.begin);
    auto end = ms_from(timeline.origin, step.end);
    text += fmt::format("  {:7.1f} - {:7.1f} {:6.1f}  {:<{}}  {}\n", start, end, end - start,
                        step.server.empty() ? "-" : step.server, width, step.what);
  }
  return text;
}

nlohmann::json timeline_json(const Timeline& timeline) {
  auto steps = nlohmann::json::array();
  for (const auto& step : timeline.steps)
    steps.push_back({{"server", step.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(step.server)},
                     {"step", step.what},
                     {"start_ms", ms_from(timeline.origin, step.begin)},
                     {"end_ms", ms_from(timeline.origin, step.end)}});
  return steps;
}

}  // namespace zkverify
