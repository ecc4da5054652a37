#pragma once
// order's and safe-to-restart's answers, as text or JSON.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/judge/restart_plan.hpp"
#include "model/render/format.hpp"

namespace zkverify {

// order --to: the new list's voters and the first step that could elect two leaders, if any.
struct OrderTo {
  std::set<int> voters;
  std::optional<OrderRefusal> refusal;
};
// Text: one name per line (a refusal goes to stderr, by the command). JSON: {"order": [...],
// "servers": [{"name", "reason"}], "verdict"}, and with --to "to": {"voters", "refusal"}.
std::string render_order(const Report& report, const std::vector<RestartStep>& steps, OutputFormat output,
                         const std::optional<OrderTo>& to = std::nullopt);
// Text: "safe: REASON" or "not safe: REASON". JSON: {"server" (the names joined by ","), "safe",
// "reason"}: the same three keys for one name or several.
std::string render_safety(const std::vector<std::string>& servers, const RestartSafety& safety, OutputFormat output);

}  // namespace zkverify
