#pragma once
// Which server to restart next, and whether restarting one now is safe. Pure: over a Report.

#include <set>
#include <string>
#include <vector>

#include "verifier/judge/report.hpp"

namespace zkverify::verifier {

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

// Safe when the ensemble is not critical and taking `name` down keeps a majority of voters that
// serve and are proven in sync (ServerRow::synced). The leader is safe only when every other voter
// is proven in sync and, when a restart round is recorded (`already_restarted` not empty), after
// the round's other servers. `name` must be one of the report's servers.
RestartSafety restart_safety(const Report& report, const std::string& name, const std::set<std::string>& already_restarted);

}  // namespace zkverify::verifier
