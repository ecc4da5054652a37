#include "model/judge/views.hpp"

#include <algorithm>
#include <iterator>

#include "model/judge/majority.hpp"

namespace zkverify {

std::set<int> MembershipView::voters() const {
  std::set<int> ids;
  for (const auto& member : members)
    if (voters_only || member.role == "participant") ids.insert(member.id);
  return ids;
}

std::vector<MembershipView> views_of(const EnsembleFacts& facts) {
  std::vector<MembershipView> views;
  for (const auto& probe : facts.probes) {
    if (!probe.conf || probe.conf->error != ProbeError::ok || probe.conf->facts.members.empty()) continue;
    const auto& conf = probe.conf->facts;
    std::vector<MemberIdentity> members;
    for (const auto& member : conf.members) members.push_back(identity_of(member));
    auto same = std::ranges::find_if(views, [&](const MembershipView& view) {
      return view.members == members && view.version == conf.config_version && view.voters_only == conf.voters_only;
    });
    if (same != views.end()) {
      same->holders.push_back(probe.address.name);
      continue;
    }
    views.push_back(MembershipView{members, conf.config_version, {probe.address.name}, conf.voters_only});
  }
  return views;
}

namespace {

// Up to `count` ids of `from`, smallest first, that are not in `taken`; added to `into`.
void take(const std::set<int>& from, const std::set<int>& taken, std::size_t count, std::set<int>& into) {
  for (int id : from) {
    if (into.size() >= count) return;
    if (!taken.contains(id)) into.insert(id);
  }
}

}  // namespace

std::optional<DisjointMajorities> disjoint_majorities(const std::set<int>& first, const std::set<int>& second) {
  if (first.empty() || second.empty()) return std::nullopt;
  auto first_needs = static_cast<std::size_t>(majority(static_cast<int>(first.size())));
  auto second_needs = static_cast<std::size_t>(majority(static_cast<int>(second.size())));
  DisjointMajorities witness;
  take(first, second, first_needs, witness.first);    // the voters only `first` has
  take(first, {}, first_needs, witness.first);        // then shared ones, smallest first
  take(second, first, second_needs, witness.second);  // the voters only `second` has
  take(second, witness.first, second_needs, witness.second);
  if (witness.first.size() < first_needs || witness.second.size() < second_needs) return std::nullopt;
  return witness;
}

}  // namespace zkverify
