#include "verifier/judge/restart_plan.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify::verifier {

namespace {

// Serving, and (when the round trip ran) it read the write back: it is in sync with the leader.
bool is_synced_voter(const ServerRow& row) { return is_serving_voter(row.state) && row.read_back.value_or(true); }

int rank(const ServerRow& row) {
  switch (row.state) {
    case ServerState::leader: return 3;
    case ServerState::follower: return row.read_back.value_or(true) ? 2 : 0;
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

RestartSafety restart_safety(const Report& report, const std::string& name, const std::set<std::string>& already_restarted) {
  auto target = std::ranges::find(report.servers, name, &ServerRow::name);
  if (target == report.servers.end()) return {false, fmt::format("{} is not one of the listed servers", name)};

  int voters = report.expected_voters;
  int majority = voters / 2 + 1;
  int synced = static_cast<int>(std::ranges::count_if(report.servers, is_synced_voter));
  int remaining = is_synced_voter(*target) ? synced - 1 : synced;
  if (remaining < majority) {
    int down = voters - synced;
    return {false, fmt::format("{} of {} voters already down or not synced: restarting {} would leave {} serving; a "
                               "quorum needs {}",
                               down, voters, name, remaining, majority)};
  }

  if (target->state == ServerState::leader) {
    std::vector<std::string> waiting;
    for (const auto& row : report.servers)
      if (row.name != name && is_serving(row.state) && row.state != ServerState::leader && !already_restarted.contains(row.name))
        waiting.push_back(row.name);
    if (!waiting.empty())
      return {false, fmt::format("{} is the leader; restart it last, after {} (zkverify order; with --state, zkverify "
                                 "remembers the ones already restarted)",
                                 name, fmt::join(waiting, ", "))};
  }

  if (!is_synced_voter(*target))
    return {true, fmt::format("{} is {}: restarting it does not lower the {} synced voters (quorum {})", name,
                              to_string(target->state), synced, majority)};
  return {true, fmt::format("{} synced voters of {}; without {} {} remain, a quorum needs {}", synced, voters, name,
                            remaining, majority)};
}

}  // namespace zkverify::verifier
