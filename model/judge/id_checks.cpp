// Server ids: one id per server, every id in a list, every id where the lists put its host. An id
// mistake (a myid copied, an ID_OFFSET that maps a StatefulSet's ordinals onto another's ids) lets a
// server vote in another's place, so what is proven is critical; what may be one server listed
// twice, or a server not yet added by a reconfig, stays a warning.

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/judge/check_parts.hpp"
#include "model/judge/derived.hpp"
#include "model/judge/views.hpp"

namespace zkverify {
namespace {

std::map<int, std::vector<std::string>> names_by_id(const Derived& derived) {
  std::map<int, std::vector<std::string>> names;
  for (const auto& row : derived.rows)
    if (row.id) names[*row.id].push_back(row.name);
  return names;
}

// The view `name` holds, or null when it reported none.
const MembershipView* view_held_by(const Derived& derived, const std::string& name) {
  for (const auto& view : derived.views)
    if (std::ranges::find(view.holders, name) != view.holders.end()) return &view;
  return nullptr;
}

const ServerRow& row_named(const Derived& derived, const std::string& name) {
  return *std::ranges::find(derived.rows, name, &ServerRow::name);
}

// The host of a server.N address ("pzoo-2.pzoo" of "pzoo-2.pzoo:2888", "::1" of "[::1]:2888").
std::string host_of(const std::string& address) {
  if (address.starts_with('[')) return address.substr(1, address.find(']') - 1);
  return address.substr(0, address.rfind(':'));
}

bool is_ip_literal(const std::string& host) {
  return host.find(':') != std::string::npos ||
         std::ranges::all_of(host, [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); });
}

// One host, written alike or as a short name and its longer form ("pzoo-0.pzoo", its FQDN).
bool same_host(const std::string& listed, const std::string& member) {
  if (listed == member) return true;
  if (is_ip_literal(listed) || is_ip_literal(member)) return false;
  const auto& shorter = listed.size() < member.size() ? listed : member;
  const auto& longer = listed.size() < member.size() ? member : listed;
  return longer.starts_with(shorter) && longer[shorter.size()] == '.';
}

const ServerProbe& probe_named(const EnsembleFacts& facts, const std::string& name) {
  return *std::ranges::find(facts.probes, name, [](const ServerProbe& probe) { return probe.address.name; });
}

// Two names that reached two addresses on one port are two pods (a pod network gives each its own).
// Names only: two IP literals of one server bound to every address would reach two addresses too.
std::string two_addresses(const EnsembleFacts& facts, const std::string& first, const std::string& other) {
  const auto& a = probe_named(facts, first);
  const auto& b = probe_named(facts, other);
  if (is_ip_literal(a.address.host) || is_ip_literal(b.address.host) || a.address.port != b.address.port) return {};
  const auto& peer_a = a.srvr_exchange.peer;
  const auto& peer_b = b.srvr_exchange.peer;
  if (peer_a.empty() || peer_b.empty() || peer_a == peer_b) return {};
  return fmt::format("{} and {} reach {} and {}", a.address.host, b.address.host, peer_a, peer_b);
}

// What proves that the servers reporting one id are two processes, each reason a clause; empty when
// nothing does (they may be one server listed twice). One process holds one list, runs one release
// and has one address; and the leader counts each learner that synced with it, so more voting
// followers than its list has other voters means two of them vote as one id.
std::vector<std::string> two_processes(const EnsembleFacts& facts, const Derived& derived,
                                       const std::vector<std::string>& names) {
  std::vector<std::string> proof;
  bool leader_among = std::ranges::any_of(
      names, [&](const auto& name) { return std::ranges::find(derived.leaders, name) != derived.leaders.end(); });
  if (derived.leaders.size() == 1 && !leader_among && derived.leader_voting_followers &&
      *derived.leader_voting_followers > derived.voters.voters - 1)
    proof.push_back(fmt::format("the leader {} counts {} synced voting followers where its list has {} other voters",
                                derived.leaders.front(), *derived.leader_voting_followers, derived.voters.voters - 1));
  const auto* first = view_held_by(derived, names.front());
  const auto& first_version = row_named(derived, names.front()).version;
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (auto addresses = two_addresses(facts, names.front(), names[i]); !addresses.empty()) proof.push_back(addresses);
    const auto* other = view_held_by(derived, names[i]);
    if (first && other && first != other)
      proof.push_back(fmt::format("{} and {} hold other lists", names.front(), names[i]));
    const auto& other_version = row_named(derived, names[i]).version;
    if (!first_version.empty() && !other_version.empty() && first_version != other_version)
      proof.push_back(fmt::format("{} runs {}, {} runs {}", names.front(), first_version, names[i], other_version));
  }
  return proof;
}

// What to do: the servers the list does not place at `id`'s host are the newcomers that need an id
// of their own (the seed's pzoo-3 on zoo-0's id); without a list that tells, each needs its own.
std::string what_to_do(const EnsembleFacts& facts, const Derived& derived, int id,
                       const std::vector<std::string>& names) {
  std::string line;  // the list's server.`id` quorum address
  if (derived.membership)
    for (const auto& member : derived.membership->members)
      if (member.id == id) line = member.quorum_address;
  std::vector<std::string> placed, newcomers;
  for (const auto& name : names)
    (!line.empty() && same_host(probe_named(facts, name).address.host, host_of(line)) ? placed : newcomers)
        .push_back(name);
  if (placed.size() != 1) return "Give each its own myid before any restart";
  return fmt::format("Give {} an id of its own (the list has server {} at {}: {}) before anything else restarts",
                     fmt::join(newcomers, " and "), id, line, placed.front());
}

void check_duplicates(const EnsembleFacts& facts, const std::map<int, std::vector<std::string>>& by_id,
                      const Derived& derived, Findings& findings) {
  for (const auto& [id, names] : by_id) {
    if (names.size() < 2) continue;
    if (auto proof = two_processes(facts, derived, names); !proof.empty())
      findings.add(Severity::critical, FindingCode::duplicate_id, "",
                   fmt::format("server id {} is reported by {}, and they are two servers ({}): both vote as "
                               "server {}. {}",
                               id, fmt::join(names, " and "), fmt::join(proof, "; "), id,
                               what_to_do(facts, derived, id, names)));
    else
      findings.add(FindingCode::duplicate_id, "",
                   fmt::format("server id {} is reported by {}: two servers with one id, or one server listed "
                               "twice; restart nothing until it is known which",
                               id, fmt::join(names, " and ")));
  }
}

// A server listed at a host that exactly one member of its list has, under another id than the
// server reports: it runs with another server's id (the lists place that id elsewhere).
void check_id_addresses(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  for (std::size_t i = 0; i < derived.rows.size() && i < facts.probes.size(); ++i) {
    const auto& row = derived.rows[i];
    const auto& host = facts.probes[i].address.host;
    if (!row.id || host.empty()) continue;
    // Its own list, else the one list the others hold (with several, which one it read is unknown).
    const auto* view = view_held_by(derived, row.name);
    if (!view && derived.views.size() == 1) view = &derived.views.front();
    if (!view) continue;
    std::vector<const MemberIdentity*> at_host;
    for (const auto& member : view->members)
      if (same_host(host, host_of(member.quorum_address))) at_host.push_back(&member);
    if (at_host.size() != 1 || at_host.front()->id == *row.id) continue;
    auto own = std::ranges::find(view->members, *row.id, &MemberIdentity::id);
    findings.add(
        FindingCode::id_address_mismatch, row.name,
        fmt::format("{} reports server id {}, but its list puts {} at {} as server {}{}: it runs with "
                    "another server's id (its myid, or an id offset)",
                    row.name, *row.id, host, at_host.front()->quorum_address, at_host.front()->id,
                    own == view->members.end() ? fmt::format(", and has no server {}", *row.id)
                                               : fmt::format(", and server {} at {}", *row.id, own->quorum_address)));
  }
}

}  // namespace

void check_ids(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  auto by_id = names_by_id(derived);
  check_duplicates(facts, by_id, derived, findings);
  check_id_addresses(facts, derived, findings);
  if (!derived.membership) return;
  // An id some list names is a member (of a change in progress, perhaps); one that no list names is
  // not, yet: a server waiting for a reconfig to add it follows, and holds the leader's list.
  std::set<int> member_ids, in_some_view, listed_ids;
  for (const auto& member : derived.membership->members) member_ids.insert(member.id);
  for (const auto& view : derived.views)
    for (const auto& member : view.members) in_some_view.insert(member.id);
  for (const auto& [id, names] : by_id) {
    listed_ids.insert(id);
    const auto& row = row_named(derived, names.front());
    if (derived.membership->voters_only && row.state == ServerState::observer) continue;  // voting_view: no observers
    if (member_ids.contains(id) || in_some_view.contains(id)) continue;
    findings.add(FindingCode::membership_unknown, row.name,
                 fmt::format("{} has server id {}, which is not in the ensemble's membership{}", row.name, id,
                             derived.membership->config_version.value_or(0) != 0
                                 ? " (a server joins by reconfig only once it is added: zkCli's reconfig -add)"
                                 : ""));
  }
  std::vector<int> unlisted;
  for (int id : member_ids)
    if (!listed_ids.contains(id)) unlisted.push_back(id);
  if (!unlisted.empty() && listed_ids.size() == facts.probes.size())
    findings.add(FindingCode::membership_unlisted, "",
                 fmt::format("the membership has {} servers but {} are listed; ids not listed: {}",
                             derived.membership->members.size(), facts.probes.size(), fmt::join(unlisted, ", ")));
}

}  // namespace zkverify
