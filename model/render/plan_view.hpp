#pragma once
// plan's answer, as text (the steps an operator follows) or JSON.

#include <string>

#include "model/judge/membership_plan.hpp"
#include "model/render/format.hpp"

namespace zkverify {

// Text: a summary line, then each step's list and what to do, in order; or "no plan: REASON". JSON:
// {"from": [ids], "to": [ids], "leader", "steps": [{"action": "add"|"remove", "id", "server",
// "voters": [ids], "restart": [names]}], "refusal": null|"REASON"}. `target_file` names the target.
std::string render_plan(const MembershipPlan& plan, const std::string& target_file, OutputFormat output);

}  // namespace zkverify
