#include "model/judge/id_collision.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify {

namespace {

constexpr const char* kAdvice = "restart nothing until every server has an id of its own";

std::optional<std::string> shared_id(const Report& report) {
  std::map<int, std::vector<std::string>> names;
  for (const auto& row : report.servers)
    if (row.id) names[*row.id].push_back(row.name);
  for (const auto& [id, holders] : names)
    if (holders.size() > 1)
      return fmt::format("server id {} is reported by {}: {} (or, if they are one server listed twice, list it once)",
                         id, fmt::join(holders, " and "), kAdvice);
  return std::nullopt;
}

// Every id some list the servers hold names, voter or observer.
std::set<int> member_ids(const Report& report) {
  std::set<int> ids;
  for (const auto& view : report.membership_views) {
    ids.insert(view.voters.begin(), view.voters.end());
    ids.insert(view.observers.begin(), view.observers.end());
  }
  return ids;
}

// A server that answers "not serving" with the leader's id, or with no id while more servers are
// listed than the lists have members: the leader hangs up on a server with its own id, so it waits
// outside until the leader goes, and then joins as a second server with that id.
std::optional<std::string> outsider(const Report& report) {
  auto leader =
      report.leader ? std::ranges::find(report.servers, *report.leader, &ServerRow::name) : report.servers.end();
  auto members = member_ids(report);
  // Observers are left out: a list read from voting_view names none.
  auto listed =
      std::ranges::count_if(report.servers, [](const ServerRow& row) { return row.state != ServerState::observer; });
  bool extra = !members.empty() && static_cast<std::size_t>(listed) > members.size();
  for (const auto& row : report.servers) {
    if (row.state != ServerState::not_serving) continue;
    if (leader != report.servers.end() && row.id && leader->id == row.id)
      return fmt::format(
          "{} has server id {}, the leader {}'s, and waits outside the ensemble: a restart of {} "
          "would let it in as a second server {}; {}",
          row.name, *row.id, leader->name, leader->name, *row.id, kAdvice);
    if (!row.id && extra)
      return fmt::format(
          "{} does not serve and names no id, and {} servers are listed where the membership has {}: "
          "it may run with a listed server's id (a wrong ID_OFFSET or a copied myid), which a "
          "restart would let in; {} (or find its myid)",
          row.name, listed, members.size(), kAdvice);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> id_collision(const Report& report) {
  if (auto shared = shared_id(report)) return shared;
  return outsider(report);
}

}  // namespace zkverify
