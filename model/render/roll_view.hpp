#pragma once
// A roll as people and tools read it: the plan (--dry-run), the table and totals (text or JSON), and
// a self-contained HTML report with an SVG timeline. Pure.

#include <string>

#include <nlohmann/json.hpp>

#include "model/judge/roll.hpp"
#include "model/render/format.hpp"

namespace zkverify {

std::string render_roll_plan(const Report& report, const RollPlan& plan, OutputFormat output);
nlohmann::json to_json(const RollRecord& roll);
// Text: the table, the totals line, what stopped the roll and how to resume, the findings. JSON: to_json.
std::string render_roll(const RollRecord& roll, OutputFormat output);
// One HTML page, no external assets: a lane per server (serving / down / catching up), the leader's
// lane, write-unavailability windows, session events and step boundaries; then the tables.
std::string render_roll_html(const RollRecord& roll);

}  // namespace zkverify
