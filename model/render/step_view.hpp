#pragma once
// One restart step as step and roll print it: the summary line and the JSON `step` object.

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "model/books/restart_timeline.hpp"
#include "model/books/watch_book.hpp"

namespace zkverify {

// "step NAME: command exited 0; NAME down for 2.1s; leader stayed ...; longest write-unavailability
// ...; sessions 5 kept, 0 expired; writes 99 acknowledged, 0 lost".
std::string render_step_summary(const std::string& server, int command_status, const StepTimeline& timeline,
                                std::chrono::milliseconds longest_unavailable, const WatchTotals& totals);
// {"server", "command_status", "downtime_ms", "leader_before", "leader_after", "longest_leaderless_ms", "summary"}.
nlohmann::json step_json(const std::string& server, int command_status, const StepTimeline& timeline,
                         const std::string& summary);

}  // namespace zkverify
