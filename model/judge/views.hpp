#pragma once
// Membership views: each server's own list of the ensemble (conf's server.N lines and version), the
// servers grouped by the list they hold, and the one question a membership change must answer: can
// a majority of one list and a majority of another be disjoint? Then two leaders can be elected,
// each with a quorum of its own list (the upgrade thread's "+2" flow: {1,2,3} of a 5-list and
// {4,5,6,7} of a 7-list). Pure: facts in, views and witnesses out.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/judge/ensemble_facts.hpp"

namespace zkverify {

struct MembershipView {
  std::vector<MemberIdentity> members;  // as the holders report them, sorted by id
  std::optional<std::int64_t> version;  // the dynamic config's version=, when reported
  std::vector<std::string> holders;     // the listed servers that hold this view, in list order
  std::vector<std::string> given;       // those of them whose list --zoo-cfg gave (they report none)
  bool voters_only = false;             // from voting_view: the members are the voters, observers unknown

  // The ids that vote in this view (its participants).
  [[nodiscard]] std::set<int> voters() const;
};

// The ids that vote in a list of members (each with an id and a role): every one when the list is
// voting_view's (voters only), else its participants. One rule for views and for the quorum count.
template <class Members>
std::set<int> voter_ids(const Members& members, bool voters_only) {
  std::set<int> ids;
  for (const auto& member : members)
    if (voters_only || member.role == "participant") ids.insert(member.id);
  return ids;
}

// The list `probe`'s server holds: the one it reported (conf, the AdminServer), else the one
// --zoo-cfg gave for it (facts.given_lists), else none (conf not whitelisted, 3.4, nothing given).
const ConfFacts* list_held(const EnsembleFacts& facts, const ServerProbe& probe);

// The views the listed servers hold (list_held), in the order of their first holder.
std::vector<MembershipView> views_of(const EnsembleFacts& facts);

// Two majorities, one of each voter set, that share no voter.
struct DisjointMajorities {
  std::set<int> first, second;
};

// A witness that a majority of `first` and a majority of `second` can be disjoint, or nullopt when
// every majority of one meets every majority of the other (one leader at a time). Exact: each takes
// the voters the other lacks first, then the shared ones, so a witness exists iff one is returned.
std::optional<DisjointMajorities> disjoint_majorities(const std::set<int>& first, const std::set<int>& second);

}  // namespace zkverify
