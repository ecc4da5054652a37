#include "model/judge/views.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>
#include <utility>

#include "model/judge/majority.hpp"

namespace zkverify {

std::set<int> MembershipView::voters() const { return voter_ids(members, voters_only); }

namespace {

// The members of `view` that vote, as identities: what voting_view lists of the same list.
std::vector<MemberIdentity> voting_members(const MembershipView& view) {
  std::vector<MemberIdentity> voting;
  for (const auto& member : view.members)
    if (view.voters_only || member.role == "participant") voting.push_back(member);
  return voting;
}

// Whether two reports can be one list. Sources differ in what they leave out, not in what they
// say: voting_view lists no observers, the AdminServer no version. So the voters must match (ids,
// quorum and election addresses), and the observers and version wherever both report them.
bool one_list(const MembershipView& a, const MembershipView& b) {
  if (a.version && b.version && *a.version != *b.version) return false;
  if (a.voters_only || b.voters_only) {
    auto without_role = [](std::vector<MemberIdentity> members) {
      for (auto& member : members) member.role.clear();
      return members;
    };
    return without_role(voting_members(a)) == without_role(voting_members(b));
  }
  return a.members == b.members;
}

// `into` absorbs `other`, one list with `into`'s holders: it keeps whatever either reported.
void merge(MembershipView& into, MembershipView other) {
  if (into.voters_only && !other.voters_only) {
    into.members = std::move(other.members);
    into.voters_only = false;
  }
  if (!into.version) into.version = other.version;
  into.holders.insert(into.holders.end(), other.holders.begin(), other.holders.end());
  into.given.insert(into.given.end(), other.given.begin(), other.given.end());
}

// "host:port"'s port part (":2888"), or the whole when it has none.
std::string_view port_of(std::string_view address) {
  auto colon = address.rfind(':');
  return colon == std::string_view::npos ? address : address.substr(colon);
}

// How the other servers list each member id (its most common line among the lists of servers that
// are not it; the first seen on a tie): a server's own line says where it binds, which Kubernetes
// setups rewrite (kubernetes-kafka's init.sh writes server.ID=0.0.0.0) while the others name it.
std::map<int, MemberIdentity> lines_of_others(const EnsembleFacts& facts) {
  std::map<int, std::vector<std::pair<MemberIdentity, int>>> seen;
  for (const auto& probe : facts.probes) {
    const auto* held = list_held(facts, probe);
    if (!held) continue;
    for (const auto& member : held->members) {
      if (held->server_id == member.id) continue;
      auto& lines = seen[member.id];
      auto line = identity_of(member);
      auto same = std::ranges::find(lines, line, &std::pair<MemberIdentity, int>::first);
      if (same == lines.end()) lines.emplace_back(line, 1);
      else ++same->second;
    }
  }
  std::map<int, MemberIdentity> common;
  for (const auto& [id, lines] : seen)
    common[id] = std::ranges::max_element(lines, std::less{}, &std::pair<MemberIdentity, int>::second)->first;
  return common;
}

// A server's own line as the others list it, where it differs from theirs in its hosts only.
MemberIdentity as_listed(const MemberIdentity& own, const std::map<int, MemberIdentity>& others) {
  auto listed = others.find(own.id);
  if (listed == others.end()) return own;
  const auto& line = listed->second;
  bool hosts_only = own.role == line.role && port_of(own.quorum_address) == port_of(line.quorum_address) &&
                    port_of(own.election_address) == port_of(line.election_address);
  return hosts_only ? line : own;
}

}  // namespace

const ConfFacts* list_held(const EnsembleFacts& facts, const ServerProbe& probe) {
  if (has_facts(probe.conf) && !probe.conf->facts.members.empty()) return &probe.conf->facts;
  auto given = facts.given_lists.find(probe.address.name);
  return given == facts.given_lists.end() || given->second.members.empty() ? nullptr : &given->second;
}

std::vector<MembershipView> views_of(const EnsembleFacts& facts) {
  auto others = lines_of_others(facts);
  std::vector<MembershipView> views;
  for (const auto& probe : facts.probes) {
    const auto* held = list_held(facts, probe);
    if (!held) continue;
    const auto& conf = *held;
    std::vector<std::string> given;
    if (!has_facts(probe.conf) || &probe.conf->facts != held) given.push_back(probe.address.name);
    MembershipView view{{}, conf.config_version, {probe.address.name}, std::move(given), conf.voters_only};
    for (const auto& member : conf.members) {
      bool own = conf.server_id == member.id;
      view.members.push_back(own ? as_listed(identity_of(member), others) : identity_of(member));
    }
    auto same = std::ranges::find_if(views, [&](const MembershipView& other) { return one_list(other, view); });
    if (same != views.end()) merge(*same, std::move(view));
    else views.push_back(std::move(view));
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
