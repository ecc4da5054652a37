#pragma once
// order's and safe-to-restart's answers, as text or JSON.

#include <string>
#include <vector>

#include "model/judge/restart_plan.hpp"
#include "model/render/format.hpp"

namespace zkverify {

// Text: one name per line. JSON: {"order": [...], "servers": [{"name", "reason"}], "verdict"}.
std::string render_order(const Report& report, const std::vector<RestartStep>& steps, OutputFormat output);
// Text: "safe: REASON" or "not safe: REASON". JSON: {"server" (the names joined by ","), "safe",
// "reason"}: the same three keys for one name or several.
std::string render_safety(const std::vector<std::string>& servers, const RestartSafety& safety, OutputFormat output);

}  // namespace zkverify
