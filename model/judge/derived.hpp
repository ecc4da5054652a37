#pragma once
// What every check of the ensemble reads, computed once from the facts: the servers' rows, the
// leaders, the voters and their majority, whether the write was committed. The checks
// (checks.hpp) are free functions of the facts and this: none depends on another having run.

#include <optional>
#include <string>
#include <vector>

#include "model/judge/ensemble_facts.hpp"
#include "model/judge/report.hpp"
#include "model/judge/views.hpp"

namespace zkverify {

// Where the number of voters came from, best first.
enum class VoterSource {
  membership,  // the participants of the membership a server reported (conf, the AdminServer)
  mntr,        // a server's zk_quorum_size
  zoo_cfg,     // the participants of the zoo.cfg that listed the servers (--zoo-cfg)
  listed,      // the listed servers less the observers: an estimate
};

struct VoterTally {
  int voters = 0;
  VoterSource source = VoterSource::listed;
  std::string mntr_server;  // mntr: whose zk_quorum_size
  // listed: how the estimate was made.
  long long listed = 0, observers = 0;
  std::vector<std::string> remembered_observers;  // unreachable now, observers as the ledger remembers
};

struct Derived {
  std::vector<ServerRow> rows;  // one per listed server, in list order, synced and notes set
  std::vector<std::string> leaders, followers;
  std::vector<MembershipView> views;      // each list of the ensemble some server holds, and who holds it
  const ConfFacts* membership = nullptr;  // the leader's membership, else the first reported (into the facts)
  VoterTally voters;
  int majority = 1;
  int serving_voters = 0;
  bool write_committed = false;  // the round trip's write was committed: a quorum acknowledged it
  // The one leader's zk_synced_followers counts every other voter: a voter zkverify cannot reach is
  // then one the ensemble still has.
  bool leader_counts_every_follower = false;
  // The one leader's synced followers that vote (zk_synced_followers less its non-voting ones, 3.6+):
  // more than its list has other voters, and two learners are voting as one id.
  std::optional<std::int64_t> leader_voting_followers;
  // Fewer voters serve than a majority, yet a committed write proves a quorum: the count was an estimate.
  bool voters_uncertain = false;
  // No quorum: fewer voters serve than a majority (and no committed write disproves the count), with
  // a listed leader (a follower of an unlisted leader leaves the listed servers unable to count it).
  bool no_quorum = false;
  bool leader_unlisted = false;  // followers serve, but no listed server leads
  // The round trip's sessions were refused (AUTHFAILED), closed for want of SASL, or an ACL refused
  // the namespace: one finding says why, instead of the round trip's failures.
  bool access_refused = false;
  // A server closed a round-trip session because it requires SASL (-124): the trip proved nothing.
  bool sasl_required = false;
};

// The facts every check reads (the ledger's remembered observers are in `facts`).
Derived derive(const EnsembleFacts& facts);

}  // namespace zkverify
