#pragma once
// Which server to restart next, and whether restarting one now is safe. Pure: over a Report.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/judge/report.hpp"

namespace zkverify {

struct RestartStep {
  std::string name;
  std::string reason;  // why it is at this place
};

// Unhealthy or missing servers first (restarting them costs nothing), then observers, then followers,
// the leader last (one election instead of one per step). List order within each group.
std::vector<RestartStep> restart_order(const Report& report);

struct RestartSafety {
  bool safe = false;
  std::string reason;
};

// Safe when the ensemble is not critical and taking `name` down, together with the servers `going_down`
// (approved by others and not yet back), keeps a majority of voters that serve and are proven in sync
// (ServerRow::synced). The leader is safe only when every other voter is proven in sync and, when a
// restart round is recorded (`already_restarted` not empty), after the round's other servers.
RestartSafety restart_safety(const Report& report, const std::string& name,
                             const std::set<std::string>& already_restarted,
                             const std::set<std::string>& going_down = {});

// Several servers restarted together (safe-to-restart A B C: a StatefulSet deleted at once): safe
// when the synced voters left without all of them (and `going_down`) are still a majority, and a
// leader among them passes the leader's rule. One name: restart_safety above, word for word.
RestartSafety restart_safety(const Report& report, const std::vector<std::string>& names,
                             const std::set<std::string>& already_restarted,
                             const std::set<std::string>& going_down = {});

// A look one step ahead, for servers that start again on another list (safe-to-restart --to): the
// refusal when `names`, holding the list whose voters are `returns_with`, could be in one majority
// and servers holding another list (report.membership_views, `names` no longer among them) in a
// disjoint one; also when no server reported its list (nothing to compare with). nullopt: no two
// leaders possible. `back_on_it`: servers already restarted onto that list (a roll's earlier steps),
// no longer holders of the one they reported.
std::optional<RestartSafety> membership_refusal(const Report& report, const std::vector<std::string>& names,
                                                const std::set<int>& returns_with,
                                                const std::set<std::string>& back_on_it = {});

// order --to: the order's steps, each server restarted in turn onto the list whose voters are
// `returns_with` (the ones before it already back on it), judged by membership_refusal. The first
// step refused, with its refusal; nullopt when no step on the way could elect two leaders.
struct OrderRefusal {
  std::string server;
  std::string reason;
};
std::optional<OrderRefusal> first_split(const Report& report, const std::vector<RestartStep>& steps,
                                        const std::set<int>& returns_with);

}  // namespace zkverify
