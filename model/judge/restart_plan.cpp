#include "model/judge/restart_plan.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/text.hpp"
#include "model/judge/id_collision.hpp"
#include "model/judge/majority.hpp"
#include "model/judge/views.hpp"

namespace zkverify {

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

namespace {

// The refusals before any count: a name not listed, ids that collide (every count below assumes
// one vote an id), an ensemble already critical.
std::optional<RestartSafety> refuse_outright(const Report& report, const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (std::ranges::find(report.servers, name, &ServerRow::name) == report.servers.end())
      return RestartSafety{false, fmt::format("{} is not one of the listed servers", name)};
  if (auto collision = id_collision(report)) return RestartSafety{false, *collision};
  if (report.verdict == Verdict::critical)
    return RestartSafety{
        false, "the ensemble is critical now (zkverify quorum says why): restart nothing until it is healthy"};
  return std::nullopt;
}

// The synced voters now, and how many a restart of `together` leaves: synced voters that other
// calls approved to restart and that are not yet back (`going_down`) count as gone too.
struct SyncedAfter {
  int voters = 0, majority = 0, synced = 0, remaining = 0;
  std::vector<std::string> leaving;  // the synced voters of going_down, but those of `together`
  [[nodiscard]] std::string also() const {
    return leaving.empty() ? ""
                           : fmt::format(" and {} (approved to restart, not yet seen back)", fmt::join(leaving, ", "));
  }
};

SyncedAfter synced_after(const Report& report, const std::set<std::string>& together,
                         const std::set<std::string>& going_down) {
  SyncedAfter count;
  count.voters = report.expected_voters;
  count.majority = zkverify::majority(count.voters);
  int taken = 0;
  std::set<int> ids;  // one vote an id, however many servers claim it: a count never exceeds its whole
  for (const auto& row : report.servers) {
    if (!is_synced_voter(row) || (row.id && !ids.insert(*row.id).second)) continue;
    ++count.synced;
    if (together.contains(row.name)) ++taken;
    else if (going_down.contains(row.name)) count.leaving.push_back(row.name);
  }
  count.remaining = count.synced - taken - static_cast<int>(count.leaving.size());
  return count;
}

}  // namespace

RestartSafety restart_safety(const Report& report, const std::string& name,
                             const std::set<std::string>& already_restarted, const std::set<std::string>& going_down) {
  if (auto refusal = refuse_outright(report, {name})) return *refusal;
  const auto& target = *std::ranges::find(report.servers, name, &ServerRow::name);
  auto count = synced_after(report, {name}, going_down);
  if (count.remaining < count.majority)
    return {false, fmt::format("{} of {} voters down or not proven synced: restarting {}{} would leave {} synced; a "
                               "quorum needs {}",
                               count.voters - count.synced, count.voters, name, count.also(), count.remaining,
                               count.majority)};
  if (target.state == ServerState::leader) {
    if (auto refusal = refuse_leader(report, name, already_restarted)) return *refusal;
    return {true,
            fmt::format("{} synced voters of {}; without the leader {}{} {} remain, a quorum needs {}. An election "
                        "follows; in a rolling restart the leader goes last",
                        count.synced, count.voters, name, count.also(), count.remaining, count.majority)};
  }
  if (!is_synced_voter(target))
    return {true, fmt::format("{} is {}: restarting it does not lower the {} synced voters (quorum {})", name,
                              to_string(target.state), count.synced, count.majority)};
  return {true, fmt::format("{} synced voters of {}; without {}{} {} remain, a quorum needs {}", count.synced,
                            count.voters, name, count.also(), count.remaining, count.majority)};
}

RestartSafety restart_safety(const Report& report, const std::vector<std::string>& names,
                             const std::set<std::string>& already_restarted, const std::set<std::string>& going_down) {
  if (names.size() == 1) return restart_safety(report, names.front(), already_restarted, going_down);
  if (auto refusal = refuse_outright(report, names)) return *refusal;
  std::set<std::string> together(names.begin(), names.end());
  auto count = synced_after(report, together, going_down);
  auto all = fmt::format("{}{}", fmt::join(names, ", "), count.also());
  if (count.remaining < count.majority)
    return {false, fmt::format("{} synced voters of {}: restarting {} together would leave {}; a quorum needs {}",
                               count.synced, count.voters, all, count.remaining, count.majority)};
  for (const auto& row : report.servers)
    if (row.state == ServerState::leader && together.contains(row.name))
      if (auto refusal = refuse_leader(report, row.name, already_restarted)) return *refusal;
  return {true, fmt::format("{} synced voters of {}; without {} {} remain, a quorum needs {}", count.synced,
                            count.voters, all, count.remaining, count.majority)};
}

std::optional<RestartSafety> membership_refusal(const Report& report, const std::vector<std::string>& names,
                                                const std::set<int>& returns_with,
                                                const std::set<std::string>& back_on_it) {
  auto who = fmt::format("{}", fmt::join(names, ", "));
  if (report.membership_views.empty())
    return RestartSafety{
        false,
        fmt::format("no server reported the list it holds (whitelist conf, give --admin-port, or for 3.4 --zoo-cfg): "
                    "whether {} on the new list could elect a second leader is not known",
                    who)};
  for (const auto& view : report.membership_views) {
    std::vector<std::string> holders;
    std::ranges::copy_if(view.holders, std::back_inserter(holders), [&](const auto& holder) {
      return std::ranges::find(names, holder) == names.end() && !back_on_it.contains(holder);
    });
    if (holders.empty()) continue;
    std::set<int> voters(view.voters.begin(), view.voters.end());
    if (auto witness = disjoint_majorities(returns_with, voters))
      return RestartSafety{
          false,
          fmt::format("{} would start again on a list of {} (ids {}) while {} hold one of {} (ids {}): a "
                      "majority of the first (ids {}) and one of the second (ids {}) share no server, so two "
                      "leaders could be elected. Change the membership one server at a time",
                      who, counted(static_cast<int>(returns_with.size()), "voter"), fmt::join(returns_with, ", "),
                      fmt::join(holders, ", "), counted(static_cast<int>(voters.size()), "voter"),
                      fmt::join(voters, ", "), fmt::join(witness->first, ", "), fmt::join(witness->second, ", "))};
  }
  return std::nullopt;
}

std::optional<OrderRefusal> first_split(const Report& report, const std::vector<RestartStep>& steps,
                                        const std::set<int>& returns_with) {
  std::set<std::string> back_on_it;
  for (const auto& step : steps) {
    if (auto refusal = membership_refusal(report, {step.name}, returns_with, back_on_it))
      return OrderRefusal{step.name, std::move(refusal->reason)};
    back_on_it.insert(step.name);
  }
  return std::nullopt;
}

}  // namespace zkverify
