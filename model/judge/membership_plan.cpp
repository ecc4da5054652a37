#include "model/judge/membership_plan.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "model/judge/id_collision.hpp"
#include "model/judge/views.hpp"

namespace zkverify {

namespace {

std::string why_no_plan(const Report& report) {
  // Before the verdict: a proved duplicate is critical too, and this says what to do about it.
  if (auto collision = id_collision(report)) return *collision;
  if (report.verdict == Verdict::critical)
    return "the ensemble is critical now (zkverify quorum says why): change no membership until it is healthy";
  if (report.membership_views.empty())
    return "no server reported the list it holds (whitelist conf, give --admin-port, or for 3.4 --zoo-cfg): the plan "
           "starts from "
           "that list";
  if (report.membership_views.size() > 1)
    return fmt::format(
        "the servers hold {} lists (zkverify quorum names them): a change is in progress; finish it (every "
        "server on one list: zkverify roll) before planning the next",
        report.membership_views.size());
  return {};
}

// The listed servers in the order to restart them (the leader last), by the ids they report.
struct Running {
  std::vector<std::string> names;  // the leader, if any, last
  std::map<int, std::string> by_id;
};

Running running_servers(const Report& report) {
  Running running;
  std::string leader;
  for (const auto& row : report.servers) {
    if (row.id) running.by_id[*row.id] = row.name;
    if (row.state == ServerState::leader) leader = row.name;
    else running.names.push_back(row.name);
  }
  if (!leader.empty()) running.names.push_back(leader);
  return running;
}

// `name` joins the servers to restart in later steps: before the leader, who stays last.
void add_running(Running& running, const std::string& name, bool has_leader) {
  auto at = has_leader && !running.names.empty() ? std::prev(running.names.end()) : running.names.end();
  running.names.insert(at, name);
}

}  // namespace

MembershipPlan plan_membership(const Report& report, const std::map<int, std::string>& target) {
  MembershipPlan plan;
  for (const auto& [id, name] : target) plan.to.insert(id);
  plan.refusal = why_no_plan(report);
  if (!plan.refusal.empty()) return plan;
  const auto& voters = report.membership_views.front().voters;
  plan.from = std::set<int>(voters.begin(), voters.end());

  plan.leader = report.leader.value_or("");
  auto running = running_servers(report);
  bool has_leader = report.leader.has_value();
  auto current = plan.from;
  for (const auto& [id, name] : target) {
    if (current.contains(id)) continue;
    current.insert(id);
    plan.steps.push_back(PlanStep{true, id, name, current, running.names});
    add_running(running, name, has_leader);
    running.by_id[id] = name;
  }
  for (auto id_at = plan.from.rbegin(); id_at != plan.from.rend(); ++id_at) {  // the highest id first
    int id = *id_at;
    if (plan.to.contains(id)) continue;
    current.erase(id);
    auto name = running.by_id.contains(id) ? running.by_id[id] : fmt::format("server.{}", id);
    std::erase(running.names, name);
    plan.steps.push_back(PlanStep{false, id, name, current, running.names});
  }
  return plan;
}

bool plan_can_split(const MembershipPlan& plan) {
  auto before = plan.from;
  for (const auto& step : plan.steps) {
    if (disjoint_majorities(before, step.voters)) return true;
    before = step.voters;
  }
  return false;
}

}  // namespace zkverify
