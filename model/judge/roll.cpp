#include "model/judge/roll.hpp"

#include <algorithm>

#include "model/judge/client_changes.hpp"

namespace zkverify {

std::map<std::string, std::string> RollRecord::versions() const {
  std::map<std::string, std::string> versions;
  for (const auto& server : servers)
    if (auto version = version_of(last_report, server); !version.empty()) versions[server] = version;
  for (const auto& step : steps)
    if (!step.version_after.empty()) versions[step.server] = step.version_after;
  return versions;
}

std::vector<std::string> RollRecord::done() const {
  std::vector<std::string> names;
  for (const auto& step : steps)
    if (std::ranges::all_of(step.findings, about_clients) && step.verdict == Verdict::healthy)
      names.push_back(step.server);
  return names;
}

std::vector<std::string> RollRecord::remaining() const {
  auto finished = done();
  std::vector<std::string> names;
  for (const auto& server : servers)
    if (!skipped.contains(server) && std::ranges::find(finished, server) == finished.end()) names.push_back(server);
  return names;
}

std::optional<std::string> next_to_restart(const Report& report, const std::set<std::string>& done,
                                           const std::set<std::string>& round) {
  for (const auto& step : restart_order(report))
    if (!done.contains(step.name) && !round.contains(step.name)) return step.name;
  return std::nullopt;
}

bool RollPlan::all_safe() const {
  return std::ranges::all_of(steps, [](const RollPlanStep& step) { return step.safety.safe; });
}

RollPlan plan_roll(const Report& report, const std::set<std::string>& skipped,
                   const std::optional<std::set<int>>& returns_with) {
  RollPlan plan;
  std::set<std::string> before = skipped;  // the round as it will be when each step comes
  for (const auto& step : restart_order(report)) {
    if (skipped.contains(step.name)) {
      plan.skipped.push_back(step.name);
      continue;
    }
    auto safety = restart_safety(report, step.name, before);
    if (safety.safe && returns_with)
      if (auto refusal = membership_refusal(report, {step.name}, *returns_with, before)) safety = *refusal;
    plan.steps.push_back({step.name, step.reason, std::move(safety)});
    before.insert(step.name);
  }
  return plan;
}

Verdict roll_verdict(const RollRecord& roll) {
  auto critical = [](const std::vector<Finding>& findings) {
    return std::ranges::any_of(findings, [](const Finding& f) { return f.severity == Severity::critical; });
  };
  // Info is evidence, not a fault: every step with clients has some (clients-moved).
  auto beyond_info = [](const std::vector<Finding>& findings) {
    return std::ranges::any_of(findings, [](const Finding& f) { return f.severity != Severity::info; });
  };
  bool any_critical = critical(roll.watch_findings);
  bool any_finding = beyond_info(roll.watch_findings);
  for (const auto& step : roll.steps) {
    any_critical = any_critical || critical(step.findings) || step.verdict == Verdict::critical;
    any_finding = any_finding || beyond_info(step.findings) || step.verdict != Verdict::healthy;
  }
  if (any_critical) return Verdict::critical;
  if (any_finding || !roll.complete) return Verdict::degraded;
  return Verdict::healthy;
}

WatchEvent on_roll_clock(WatchEvent event, Clock::time_point roll_started) {
  event.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(event.at - roll_started);
  return event;
}

}  // namespace zkverify
