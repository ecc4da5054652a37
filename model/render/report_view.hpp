#pragma once
// A Report as text for a terminal, or as one JSON object (schema in README.md).

#include <string>

#include <nlohmann/json.hpp>

#include "model/judge/report.hpp"

namespace zkverify {

std::string render_text(const Report& report);
nlohmann::json to_json(const Report& report);
std::string render_json(const Report& report);  // to_json, pretty-printed, with a trailing newline
// "timings: probe 9ms, connect 3ms, ..., total 41ms", one line: text mode's --verbose.
std::string render_timings_text(const PhaseTimings& timings);
// {"probe": 9, "connect": 3, ...}: whole milliseconds, rounded down.
nlohmann::json timings_json(const PhaseTimings& timings);

}  // namespace zkverify
