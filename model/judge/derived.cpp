#include "model/judge/derived.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/judge/majority.hpp"
#include "model/judge/views.hpp"
#include "model/parse/parsers.hpp"

namespace zkverify {

namespace {

const ReadBack* read_of(const EnsembleFacts& facts, const std::string& name) {
  if (!facts.round_trip) return nullptr;
  for (const auto& read : facts.round_trip->reads)
    if (read.server == name) return &read;
  return nullptr;
}

// What a server's srvr exchange says of it; the row's error says why when it says nothing.
void describe_srvr(const ServerProbe& probe, ServerRow& row) {
  if (probe.srvr_exchange.error != ProbeError::ok) {
    row.state = ServerState::unreachable;
    row.error = describe(probe.srvr_exchange);
    return;
  }
  row.latency_ms = static_cast<double>(probe.srvr_exchange.latency.count()) / 1000.0;
  const auto& srvr = *probe.srvr;
  if (srvr.ok()) {
    row.state = state_of(srvr.facts.mode);
    row.zxid = srvr.facts.zxid;
    row.node_count = srvr.facts.node_count;
    row.version = release_of(srvr.facts.version);
    row.packets_received = srvr.facts.received;
    row.connections = srvr.facts.connections;
  } else if (srvr.error == ProbeError::not_serving) {
    row.state = ServerState::not_serving;
    row.error = "not currently serving requests";
  } else {  // srvr cannot be disabled in 3.8, but an old server may refuse it
    row.state = ServerState::bad_reply;
    row.error = srvr.error == ProbeError::malformed ? srvr.detail : "srvr refused (not whitelisted)";
  }
}

ServerRow row_of(const EnsembleFacts& facts, const ServerProbe& probe) {
  ServerRow row;
  row.name = probe.address.name;
  row.address = probe.address.endpoint();
  if (has_facts(probe.conf) && probe.conf->facts.server_id) row.id = probe.conf->facts.server_id;
  const auto* read = read_of(facts, probe.address.name);
  if (!row.id && read && read->session_server_id) row.id = read->session_server_id;
  describe_srvr(probe, row);
  if (has_facts(probe.mntr)) row.ephemerals = probe.mntr->facts.ephemerals;
  if (facts.tls && probe.srvr_exchange.certificate) {
    row.certificate = probe.srvr_exchange.certificate;
    row.certificate_days_left = days_left(*row.certificate, facts.tls->now);
  }
  if (read && read->read_mzxid && (!row.zxid || *row.zxid < *read->read_mzxid)) row.zxid = read->read_mzxid;
  if (read && facts.round_trip->write_zxid) row.read_back = read->error == ZkError::ok && read->bytes_match;
  if (has_facts(probe.ruok) && row.state == ServerState::not_serving)
    row.note = "ruok says imok, but it is not serving";
  return row;
}

// The participants of the zoo.cfg that listed the servers (--zoo-cfg), when one did.
std::optional<int> configured_voters(const EnsembleFacts& facts) {
  auto configured = [](const ServerProbe& probe) { return probe.address.observer.has_value(); };
  if (facts.probes.empty() || !std::ranges::all_of(facts.probes, configured)) return std::nullopt;
  return static_cast<int>(
      std::ranges::count_if(facts.probes, [](const ServerProbe& probe) { return !*probe.address.observer; }));
}

// The listed servers less those srvr says are observers (and unreachable ones the ledger saw as observers).
VoterTally estimated_voters(const EnsembleFacts& facts) {
  VoterTally count;
  count.source = VoterSource::listed;
  count.observers = std::ranges::count_if(facts.probes, [&](const ServerProbe& probe) {
    if (mode_of(probe) == Mode::observer) return true;
    if (mode_of(probe) || !facts.remembered_observers.contains(probe.address.name)) return false;
    count.remembered_observers.push_back(probe.address.name);
    return true;
  });
  count.listed = static_cast<long long>(facts.probes.size());
  count.voters = static_cast<int>(count.listed - count.observers);
  return count;
}

// Voters the ensemble is configured with: the participants of the reported membership; else mntr's
// zk_quorum_size; else the participants of --zoo-cfg's configuration (the list given for the leader,
// else the file's); else an estimate.
VoterTally count_voters(const EnsembleFacts& facts, const ConfFacts* membership) {
  bool given = std::ranges::any_of(facts.given_lists, [&](const auto& entry) { return &entry.second == membership; });
  if (membership && !given) {
    int voters =
        membership->voters_only
            ? static_cast<int>(membership->members.size())
            : static_cast<int>(std::ranges::count(membership->members, std::string("participant"), &Member::role));
    return {voters, VoterSource::membership, "", 0, 0, {}};
  }
  for (const auto& probe : facts.probes)
    if (has_facts(probe.mntr) && probe.mntr->facts.quorum_size)
      return {static_cast<int>(*probe.mntr->facts.quorum_size), VoterSource::mntr, probe.address.name, 0, 0, {}};
  if (membership)  // --zoo-cfg's list for the leader (or the first server), as the servers run it
    return {static_cast<int>(voter_ids(membership->members, false).size()), VoterSource::zoo_cfg, "", 0, 0, {}};
  if (auto voters = configured_voters(facts)) return {*voters, VoterSource::zoo_cfg, "", 0, 0, {}};
  return estimated_voters(facts);
}

std::optional<bool> proven_synced(const ServerRow& row, bool mntr_counts_every_follower) {
  if (row.state == ServerState::leader) return true;
  if (!is_serving(row.state)) return false;
  if (row.read_back) return row.read_back;
  if (row.state == ServerState::follower && mntr_counts_every_follower) return true;
  return std::nullopt;
}

bool shares_an_id(const std::vector<ServerRow>& rows) {
  std::set<int> ids;
  return std::ranges::any_of(rows, [&ids](const ServerRow& row) { return row.id && !ids.insert(*row.id).second; });
}

// The leader's zk_synced_followers against the other voters: a note on its row, and every follower
// proven in sync when it counts them all.
void mark_synced(const EnsembleFacts& facts, Derived& derived) {
  bool counts_every_follower = false;
  if (derived.leaders.size() == 1) {
    const auto& leader = *std::ranges::find(facts.probes, derived.leaders.front(),
                                            [](const ServerProbe& probe) { return probe.address.name; });
    if (has_facts(leader.mntr) && leader.mntr->facts.synced_followers) {
      auto synced = *leader.mntr->facts.synced_followers;
      auto expected = derived.voters.voters - 1;
      if (auto non_voting = leader.mntr->facts.synced_non_voting_followers)
        derived.leader_voting_followers = synced - *non_voting;
      // Two servers on one id fill one follower's place in the count: it no longer proves the others.
      counts_every_follower = synced >= expected && !shares_an_id(derived.rows);
      // More synced followers than its view has other voters: followers outside its view (a server
      // started on a longer list follows, without a vote). Said so, not as "6/4".
      std::ranges::find(derived.rows, leader.address.name, &ServerRow::name)->note =
          synced > expected ? fmt::format("synced followers {} ({} voters besides it in its view)", synced, expected)
                            : fmt::format("synced followers {}/{}", synced, expected);
    }
  }
  derived.leader_counts_every_follower = counts_every_follower;
  for (auto& row : derived.rows) row.synced = proven_synced(row, counts_every_follower);
}

bool sasl_demanded(const RoundTrip& trip) {
  auto closed = [](ZkError error) { return error == ZkError::session_closed_requires_sasl_auth; };
  if (closed(trip.namespace_error) || closed(trip.marker_create_error) || closed(trip.write_error)) return true;
  return std::ranges::any_of(trip.reads,
                             [&](const ReadBack& read) { return closed(read.error) || closed(read.marker_error); });
}

bool sessions_refused(const RoundTrip& trip) {
  if (trip.write_error == ZkError::auth_failed) return true;
  return std::ranges::any_of(trip.reads, [](const ReadBack& read) {
    return read.error == ZkError::auth_failed || read.marker_error == ZkError::auth_failed;
  });
}

// The list `held` gives for the one leader, else for the first server it gives one for.
template <class Held>
const ConfFacts* leaders_else_first(const EnsembleFacts& facts, const Derived& derived, Held held) {
  if (derived.leaders.size() == 1) {
    auto leader = std::ranges::find(facts.probes, derived.leaders.front(),
                                    [](const ServerProbe& probe) { return probe.address.name; });
    if (const auto* list = held(*leader)) return list;
  }
  for (const auto& probe : facts.probes)
    if (const auto* list = held(probe)) return list;
  return nullptr;
}

// The membership the voters are counted from: the one leader's own, as its view decides what commits
// (with views that differ, the others' holders follow it); else the first one reported. Only when no
// server reports one, a list --zoo-cfg gave (a 3.4 ensemble's), the leader's else the first.
const ConfFacts* membership_of(const EnsembleFacts& facts, const Derived& derived) {
  auto reported = [](const ServerProbe& probe) -> const ConfFacts* {
    return has_facts(probe.conf) && !probe.conf->facts.members.empty() ? &probe.conf->facts : nullptr;
  };
  if (const auto* list = leaders_else_first(facts, derived, reported)) return list;
  return leaders_else_first(facts, derived, [&facts](const ServerProbe& probe) { return list_held(facts, probe); });
}

// Leaders and followers that vote in `membership`, one vote an id: a follower whose id it does not
// list as a voter serves without a vote (started on a longer list), and two servers claiming one id
// are one vote in the leader's count, so neither is counted past its whole. Unknown ids count.
int count_serving_voters(const EnsembleFacts& facts, const Derived& derived) {
  auto voters =
      derived.membership ? voter_ids(derived.membership->members, derived.membership->voters_only) : std::set<int>{};
  std::set<int> serving_ids;
  int unknown = 0;
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    auto mode = mode_of(facts.probes[i]);
    const auto& id = derived.rows[i].id;
    if (!mode || !is_serving_voter(*mode)) continue;
    if (!id) ++unknown;
    else if (voters.empty() || voters.contains(*id)) serving_ids.insert(*id);
  }
  return static_cast<int>(serving_ids.size()) + unknown;
}

}  // namespace

Derived derive(const EnsembleFacts& facts) {
  Derived derived;
  for (const auto& probe : facts.probes) {
    derived.rows.push_back(row_of(facts, probe));
    if (mode_of(probe) == Mode::leader) derived.leaders.push_back(probe.address.name);
    if (mode_of(probe) == Mode::follower) derived.followers.push_back(probe.address.name);
  }
  derived.views = views_of(facts);
  derived.membership = membership_of(facts, derived);
  derived.voters = count_voters(facts, derived.membership);
  derived.majority = majority(derived.voters.voters);
  derived.serving_voters = count_serving_voters(facts, derived);
  const auto& trip = facts.round_trip;
  derived.write_committed = trip && trip->write_error == ZkError::ok && trip->write_zxid;
  derived.leader_unlisted = derived.leaders.empty() && !derived.followers.empty();
  bool short_of_majority = derived.serving_voters < derived.majority && !derived.leader_unlisted;
  derived.voters_uncertain =
      short_of_majority && derived.voters.source == VoterSource::listed && derived.write_committed;
  derived.no_quorum = short_of_majority && !derived.voters_uncertain;
  derived.sasl_required = trip && sasl_demanded(*trip);
  derived.access_refused = trip && (derived.sasl_required || sessions_refused(*trip) || !trip->denied_path.empty());
  mark_synced(facts, derived);
  return derived;
}

}  // namespace zkverify
