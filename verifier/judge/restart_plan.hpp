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

// Safe when taking `name` down keeps a majority of synced, serving voters, and `name` is not the
// leader while a follower or observer outside `already_restarted` is still to be restarted.
// `name` must be one of the report's servers.
RestartSafety restart_safety(const Report& report, const std::string& name, const std::set<std::string>& already_restarted);

}  // namespace zkverify::verifier
