#include "verifier/judge/restart_plan.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify::verifier {

namespace {

// A voter that serves and is proven in sync with the leader (ServerRow::synced): unproven is not synced.
bool is_synced_voter(const ServerRow& row) { return is_serving_voter(row.state) && row.synced == true; }

int rank(const ServerRow& row) {
  switch (row.state) {
    case ServerState::leader: return 3;
    case ServerState::follower: return row.synced.value_or(true) ? 2 : 0;
    case ServerState::observer: return 1;
    default: return 0;  // unreachable, not serving, standalone, read-only, bad reply
  }
}

std::string reason_for(const ServerRow& row) {
  switch (rank(row)) {
    case 3: return "leader: last, so the ensemble elects once";
    case 2: return "follower";
    case 1: return "observer: not a voter";
    default:
      return row.error.empty() ? fmt::format("{}: not serving as a synced voter already", to_string(row.state))
                               : fmt::format("{}: {}", to_string(row.state), row.error);
  }
}

}  // namespace

std::vector<RestartStep> restart_order(const Report& report) {
  std::vector<const ServerRow*> rows;
  for (const auto& row : report.servers) rows.push_back(&row);
  std::ranges::stable_sort(rows, {}, [](const ServerRow* row) { return rank(*row); });
  std::vector<RestartStep> steps;
  for (const auto* row : rows) steps.push_back({row->name, reason_for(*row)});
  return steps;
}

namespace {

// The leader goes when every other voter is proven in sync (the election then has a synced quorum)
// and, in a round recorded with --state, after the others of the round.
std::optional<RestartSafety> refuse_leader(const Report& report, const std::string& name,
                                           const std::set<std::string>& already_restarted) {
  std::vector<std::string> waiting, unproven;
  for (const auto& row : report.servers) {
    if (row.name == name) continue;
    if (is_serving(row.state) && !already_restarted.contains(row.name)) waiting.push_back(row.name);
    if (is_serving_voter(row.state) && row.synced != true) unproven.push_back(row.name);
  }
  if (!already_restarted.empty() && !waiting.empty())
    return RestartSafety{false, fmt::format("{} is the leader; this restart round (--state) still has {} to restart "
                                            "first: the leader goes last",
                                            name, fmt::join(waiting, ", "))};
  if (!unproven.empty())
    return RestartSafety{false, fmt::format("{} is the leader; {} not proven in sync with it (run without --no-write, "
                                            "or whitelist mntr), so the election could lack a synced quorum",
                                            name, fmt::join(unproven, ", "))};
  return std::nullopt;
}

}  // namespace

RestartSafety restart_safety(const Report& report, const std::string& name, const std::set<std::string>& already_restarted) {
  auto target = std::ranges::find(report.servers, name, &ServerRow::name);
  if (target == report.servers.end()) return {false, fmt::format("{} is not one of the listed servers", name)};
  if (report.verdict == Verdict::critical)
    return {false, "the ensemble is critical now (zkverify quorum says why): restart nothing until it is healthy"};

  int voters = report.expected_voters;
  int majority = voters / 2 + 1;
  int synced = static_cast<int>(std::ranges::count_if(report.servers, is_synced_voter));
  int remaining = is_synced_voter(*target) ? synced - 1 : synced;
  if (remaining < majority) {
    int down = voters - synced;
    return {false, fmt::format("{} of {} voters down or not proven synced: restarting {} would leave {} synced; a "
                               "quorum needs {}",
                               down, voters, name, remaining, majority)};
  }
  if (target->state == ServerState::leader) {
    if (auto refusal = refuse_leader(report, name, already_restarted)) return *refusal;
    return {true, fmt::format("{} synced voters of {}; without the leader {} {} remain, a quorum needs {}. An election "
                              "follows; in a rolling restart the leader goes last",
                              synced, voters, name, remaining, majority)};
  }
  if (!is_synced_voter(*target))
    return {true, fmt::format("{} is {}: restarting it does not lower the {} synced voters (quorum {})", name,
                              to_string(target->state), synced, majority)};
  return {true, fmt::format("{} synced voters of {}; without {} {} remain, a quorum needs {}", synced, voters, name,
                            remaining, majority)};
}

}  // namespace zkverify::verifier
