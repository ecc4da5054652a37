#include "model/render/plan_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/text.hpp"
#include "model/render/json_text.hpp"

namespace zkverify {

namespace {

std::string ids(const std::set<int>& voters) { return fmt::format("ids {}", fmt::join(voters, ", ")); }

std::string plan_json(const MembershipPlan& plan) {
  nlohmann::json json{{"from", plan.from}, {"to", plan.to}, {"steps", nlohmann::json::array()}};
  json["leader"] = plan.leader.empty() ? nlohmann::json() : nlohmann::json(plan.leader);
  for (const auto& step : plan.steps)
    json["steps"].push_back({{"action", step.adds ? "add" : "remove"},
                             {"id", step.id},
                             {"server", step.name},
                             {"voters", step.voters},
                             {"restart", step.restart}});
  json["refusal"] = plan.refusal.empty() ? nlohmann::json() : nlohmann::json(plan.refusal);
  return json_text(json) + "\n";
}

// "pzoo-0, pzoo-1, zoo-1 (the leader) last".
std::string restarts(const PlanStep& step, const std::string& leader) {
  auto names = fmt::format("{}", fmt::join(step.restart, ", "));
  if (!leader.empty() && !step.restart.empty() && step.restart.back() == leader) names += " (the leader last)";
  return names;
}

std::string step_text(const PlanStep& step, std::size_t number, std::size_t count, const MembershipPlan& plan,
                      const std::string& target_file) {
  auto text = fmt::format("step {} of {}: {} {} (id {}); the list becomes {}\n", number, count,
                          step.adds ? "add" : "remove", step.name, step.id, ids(step.voters));
  text += step.adds
              ? fmt::format("  1. give every server's zoo.cfg the server.N lines of {} (server.{} as {} has it)\n",
                            ids(step.voters), step.id, target_file)
              : fmt::format("  1. give every server's zoo.cfg the server.N lines of {} (server.{}'s removed)\n",
                            ids(step.voters), step.id);
  int next = 2;
  if (step.adds) text += fmt::format("  {}. start {} on it, then: zkverify quorum --wait\n", next++, step.name);
  else  // a server on the new list cannot follow a leader the list leaves out
    text += fmt::format(
        "  {}. if {} leads, restart it first, on its old list (zkverify step): another server is elected "
        "and it follows\n",
        next++, step.name);
  if (!step.restart.empty())
    text += fmt::format("  {}. restart onto it, one at a time, each after the gate (zkverify roll does this): {}\n",
                        next++, restarts(step, plan.leader));
  if (!step.adds)
    text += fmt::format("  {}. stop {} (if it leads, the others elect a leader), then: zkverify quorum --wait\n", next,
                        step.name);
  return text;
}

}  // namespace

std::string render_plan(const MembershipPlan& plan, const std::string& target_file, OutputFormat output) {
  if (output == OutputFormat::json) return plan_json(plan);
  if (!plan.refusal.empty()) return "no plan: " + plan.refusal + "\n";
  if (plan.steps.empty())
    return fmt::format("nothing to change: the servers hold {}'s list ({})\n", target_file, ids(plan.to));
  auto text = fmt::format(
      "from {} voters ({}) to {} ({}) in {} of one voter each: each list's majorities meet the next "
      "one's, so no state on the way can elect two leaders. Finish each step (every server on its list, "
      "zkverify quorum exit 0) before the next.\n",
      plan.from.size(), ids(plan.from), plan.to.size(), ids(plan.to),
      counted(static_cast<long long>(plan.steps.size()), "step"));
  for (std::size_t i = 0; i < plan.steps.size(); ++i)
    text += step_text(plan.steps[i], i + 1, plan.steps.size(), plan, target_file);
  return text;
}

}  // namespace zkverify
