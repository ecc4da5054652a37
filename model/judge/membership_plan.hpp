#pragma once
// `zkverify plan --to FILE`: the way from the list the servers hold to another, one voter at a time.
// Adding or removing one voter keeps every majority of the old list meeting every majority of the
// new one (n and n+1 voters: their majorities add up to more than n+1), so while the servers move
// from one list to the next no two leaders can be elected; changing several at once can split the
// ensemble (the upgrade thread's 5 -> 7). Pure: over a Report and the target's voters.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/judge/report.hpp"

namespace zkverify {

struct PlanStep {
  bool adds = true;                  // else removes
  int id = 0;                        // the voter added or removed
  std::string name;                  // its server's name: as listed, or the target's host's first label
  std::set<int> voters;              // the list after this step
  std::vector<std::string> restart;  // the servers to restart onto it, one at a time, the leader last
};

struct MembershipPlan {
  std::set<int> from, to;
  std::string leader;           // the leader when planned (last in each step's restarts), if one
  std::vector<PlanStep> steps;  // empty when from == to, or when refused
  std::string refusal;          // why there is no plan (non-empty: none)
};

// The plan from the one list the report's servers hold to `target` (its voters, each with its
// server's name): the additions first, lowest id first, then the removals, highest id first (as a
// StatefulSet scales: the newest pod goes first), so the ensemble never has fewer voters than at
// either end. Refused when no server reported its list, when servers hold more
// than one (a change is in progress: finish it first), or when the ensemble is critical.
MembershipPlan plan_membership(const Report& report, const std::map<int, std::string>& target);

// Whether every step's list and the one before it could elect two leaders at once (the pure check
// of views.hpp): false for every plan plan_membership makes; the tests hold it to that.
bool plan_can_split(const MembershipPlan& plan);

}  // namespace zkverify
