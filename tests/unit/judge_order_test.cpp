// The ensemble's checks are free functions of the facts and derive()'s result: run in any order,
// they find the same things. A check that read what another one found (as the old Judge's slow-write
// check read the no-quorum finding) would differ under some order.

#include <algorithm>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>

#include "model/judge/check_parts.hpp"
#include "model/judge/derived.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;

namespace {

using Key = std::tuple<Severity, FindingCode, std::string, std::string>;

std::vector<Key> run_in(const EnsembleFacts& facts, const std::vector<Check>& order) {
  auto derived = derive(facts);
  Findings findings;
  for (auto check : order) check(facts, derived, findings);
  std::vector<Key> keys;
  for (const auto& finding : findings.list)
    keys.emplace_back(finding.severity, finding.code, finding.server, finding.message);
  std::ranges::sort(keys);
  return keys;
}

// Ensembles that between them make every check speak.
std::vector<EnsembleFacts> varied_ensembles() {
  std::vector<EnsembleFacts> all{healthy_five()};
  auto two_leaders = healthy_five();
  two_leaders.probes[0].srvr->facts.mode = Mode::leader;
  all.push_back(two_leaders);
  auto no_quorum = healthy_five();
  no_quorum.probes = {unreachable("pzoo-0"), unreachable("pzoo-1"), unreachable("pzoo-2"), not_serving("zoo-0"),
                      server("zoo-1", Mode::standalone, 0x100000001)};
  no_quorum.round_trip = round_trip(no_quorum.probes, "zoo-1", 1);
  no_quorum.round_trip->write_error = ZkError::deadline_exceeded;  // not a slow write: there is no quorum
  all.push_back(no_quorum);
  auto slow = healthy_five();
  slow.round_trip->write_error = ZkError::deadline_exceeded;
  slow.round_trip->reads.clear();
  slow.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, MntrFacts{"leader", 5, 3, 3, 5, {}, {}, {}}, {}};
  slow.probes[0].refused_words = {"conf"};
  slow.probes[4].srvr->facts.version = "3.9.3-x, built on 2024";
  all.push_back(slow);
  auto refused = healthy_five();
  refused.round_trip->denied_path = "/zkverify";
  refused.round_trip->acl_error = ZkError::no_auth;
  refused.probes[2].srvr->facts.zxid = Zxid{0x200000001};
  all.push_back(refused);
  return all;
}

}  // namespace

TEST_CASE("the ensemble's checks find the same in any order") {
  auto checks = ensemble_checks();
  std::vector<Check> canonical(checks.begin(), checks.end());
  std::mt19937 shuffle{20261204};
  for (const auto& facts : varied_ensembles()) {
    auto expected = run_in(facts, canonical);
    REQUIRE_FALSE(expected.empty());
    for (int round = 0; round < 40; ++round) {
      auto order = canonical;
      std::ranges::shuffle(order, shuffle);
      CHECK(run_in(facts, order) == expected);
    }
  }
}

TEST_CASE("derive: the voters, the majority and the quorum are computed once, for every check") {
  auto facts = healthy_five();
  facts.probes[3] = unreachable("zoo-0");
  facts.probes[4] = unreachable("zoo-1");
  auto derived = derive(facts);
  CHECK(derived.voters.voters == 5);
  CHECK(derived.voters.source == VoterSource::listed);
  CHECK(derived.majority == 3);
  CHECK(derived.serving_voters == 3);
  CHECK_FALSE(derived.no_quorum);
  facts.probes[2] = unreachable("pzoo-2");
  facts.round_trip.reset();
  derived = derive(facts);
  CHECK(derived.serving_voters == 2);
  CHECK(derived.no_quorum);
  CHECK_FALSE(derived.voters_uncertain);
}
