// Server ids (model/judge/id_checks.cpp): what is proven wrong is critical, what may be one server
// listed twice or a server not yet added by a reconfig stays a warning.

#include <algorithm>

#include <catch2/catch.hpp>

#include "model/judge/checks.hpp"
#include "model/judge/id_collision.hpp"
#include "model/judge/membership_plan.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/judge/roll.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

// The seed's five on their own hosts (a Kubernetes headless Service's names), each reporting `ids[i]`
// and the list `count` servers long: server.N=HOST-OF-N:2888:3888.
EnsembleFacts named_five(const std::vector<int>& ids, int count = 5) {
  const std::vector<std::string> names{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2", "zoo-3"};
  auto facts = healthy_five();
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    facts.probes[i].address.host = names[i] + (i < 3 ? ".pzoo" : ".zoo");
    ConfFacts conf;
    for (int id = 1; id <= count; ++id) {
      auto host = names[id - 1] + (id <= 3 ? ".pzoo" : ".zoo") + ".kafka.svc.cluster.local";
      conf.members.push_back({id, host + ":2888", host + ":3888", "participant", ""});
    }
    conf.server_id = ids[i];
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  return facts;
}

}  // namespace

TEST_CASE("ids: every server at the host its list gives its id is healthy", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 4, 5}));
  CHECK(report.verdict == Verdict::healthy);
  CHECK_FALSE(find(report, "id-address-mismatch"));
  CHECK_FALSE(find(report, "duplicate-id"));
}

// ID_OFFSET wrong for the zoo StatefulSet: zoo-0 and zoo-1 say 3 and 4, one below their lines.
TEST_CASE("ids: a server listed at another id's host is critical, named, with both lines", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 3, 4}));
  CHECK(report.verdict == Verdict::critical);
  auto* zoo0 = find(report, "id-address-mismatch");
  REQUIRE(zoo0);
  CHECK(zoo0->severity == Severity::critical);
  CHECK(zoo0->server == "zoo-0");
  CHECK_THAT(zoo0->message, Contains("zoo-0 reports server id 3, but its list puts zoo-0.zoo at "
                                     "zoo-0.zoo.kafka.svc.cluster.local:2888 as server 4") &&
                                Contains("server 3 at pzoo-2.pzoo.kafka.svc.cluster.local:2888"));
  auto mismatched = std::ranges::count_if(report.findings,
                                          [](const Finding& f) { return f.code == FindingCode::id_address_mismatch; });
  CHECK(mismatched == 2);  // zoo-1 too (id 4 where its host is server 5's)
  // zoo-0 and pzoo-2 both say 3, with one list and one release: that alone does not prove two servers.
  REQUIRE(find(report, "duplicate-id"));
  CHECK(find(report, "duplicate-id")->severity == Severity::warning);
}

TEST_CASE("ids: an id with no server.N line, at a host that has one", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 4, 9}));
  CHECK_THAT(find(report, "id-address-mismatch")->message, Contains("and has no server 9"));
  CHECK(find(report, "membership-unknown"));
}

TEST_CASE("ids: hosts that tell nothing are not compared", "[ids]") {
  SECTION("one address for all (a loopback lab): every line is at it") {
    auto facts = named_five({2, 1, 3, 4, 5});
    for (auto& probe : facts.probes) probe.address.host = "127.0.0.1";
    for (auto& probe : facts.probes)
      for (auto& member : probe.conf->facts.members) member.quorum_address = "127.0.0.1:" + std::to_string(member.id);
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
  SECTION("listed by IP address, listed by name: never equal") {
    auto facts = named_five({2, 1, 3, 4, 5});
    for (std::size_t i = 0; i < facts.probes.size(); ++i)
      facts.probes[i].address.host = "10.0.0." + std::to_string(i + 1);
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
  SECTION("a name that ends inside a label of another: pzoo-2.pz is not pzoo-2.pzoo") {
    auto facts = named_five({1, 2, 3, 4, 5});
    facts.probes[4].address.host = "pzoo-2.pz";  // zoo-1, id 5: the start of server 3's host only
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
}

TEST_CASE("ids: one id twice is critical only when they are provably two servers", "[ids]") {
  auto facts = healthy_five();
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    ConfFacts conf;
    for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", ""});
    conf.server_id = i == 4 ? 4 : static_cast<int>(i) + 1;  // zoo-1 says 4, as zoo-0 does
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  SECTION("one list, one release: perhaps one server listed twice") {
    auto report = judge(facts);
    auto* duplicate = find(report, "duplicate-id");
    REQUIRE(duplicate);
    CHECK(duplicate->severity == Severity::warning);
    CHECK_THAT(duplicate->message, Contains("or one server listed twice"));
  }
  SECTION("other releases") {
    facts.probes[4].srvr->facts.version = "3.9.3-abc, built on 2024";
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    CHECK_THAT(find(report, "duplicate-id")->message,
               Contains("server id 4 is reported by zoo-0 and zoo-1, and they are two servers (zoo-0 runs 3.8.0, "
                        "zoo-1 runs 3.9.3)"));
  }
  SECTION("other lists") {
    facts.probes[4].conf->facts.members.push_back({6, "h:1", "h:2", "participant", ""});
    auto report = judge(facts);
    CHECK(find(report, "duplicate-id")->severity == Severity::critical);
    CHECK_THAT(find(report, "duplicate-id")->message, Contains("zoo-0 and zoo-1 hold other lists"));
  }
}

// Seen on a real 3.8.0 ensemble with reconfigEnabled: a server started on a list that names it, to
// be added by reconfig, follows and reports the leader's list, without itself, until the reconfig.
TEST_CASE("ids: an id in no list is a warning, also where its own list is read", "[ids]") {
  auto facts = named_five({1, 2, 3, 4, 5});
  facts.probes[4].conf->facts.members.pop_back();  // zoo-1's own list stops at 4 (the others name 5)
  facts.probes[4].conf->facts.server_id = 6;
  auto report = judge(facts);
  auto* unknown = find(report, "membership-unknown");
  REQUIRE(unknown);
  CHECK(unknown->severity == Severity::warning);
  CHECK(unknown->server == "zoo-1");
}

namespace {

// The seed's warning (issue 57): pzoo scaled to 4 without moving zoo's offset, so pzoo-3 runs with
// myid 4 (zoo-0's) and the ensemble's five-server list, listed sixth; every pod on its own address.
// pzoo-1 leads and, as a real 3.8.0 leader does, counts pzoo-3 as one more synced follower.
EnsembleFacts pzoo3_on_id_4() {
  auto facts = named_five({1, 2, 3, 4, 5});
  auto pzoo3 = facts.probes[3];  // zoo-0's list and id
  pzoo3.address.name = "pzoo-3";
  pzoo3.address.host = "pzoo-3.pzoo";
  facts.probes.push_back(pzoo3);
  for (std::size_t i = 0; i < facts.probes.size(); ++i)
    facts.probes[i].srvr_exchange.peer = "10.1.0." + std::to_string(i + 1);
  MntrFacts leader{"leader", 5, 5, 5, {}, 0, {}, {}};
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, leader, {}};
  return facts;
}

}  // namespace

TEST_CASE("ids: a second server on a listed id is proved by the leader's count and by two addresses", "[ids]") {
  auto facts = pzoo3_on_id_4();
  SECTION("both proofs: critical, both pods named, the newcomer told to take an id of its own") {
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    auto* duplicate = find(report, "duplicate-id");
    REQUIRE(duplicate);
    CHECK(duplicate->severity == Severity::critical);
    CHECK_THAT(duplicate->message,
               Contains("server id 4 is reported by zoo-0 and pzoo-3, and they are two servers (the leader pzoo-1 "
                        "counts 5 synced voting followers where its list has 4 other voters; zoo-0.zoo and "
                        "pzoo-3.pzoo reach 10.1.0.4 and 10.1.0.6)") &&
                   Contains("Give pzoo-3 an id of its own (the list has server 4 at "
                            "zoo-0.zoo.kafka.svc.cluster.local:2888: zoo-0) before anything else restarts"));
  }
  SECTION("the leader's count alone") {
    for (auto& probe : facts.probes) probe.srvr_exchange.peer.clear();
    auto report = judge(facts);
    auto* duplicate = find(report, "duplicate-id");
    CHECK(duplicate->severity == Severity::critical);
    CHECK_THAT(duplicate->message, Contains("(the leader pzoo-1 counts 5 synced voting followers"));
  }
  SECTION("two addresses alone (no mntr)") {
    facts.probes[1].mntr.reset();
    auto report = judge(facts);
    CHECK(find(report, "duplicate-id")->severity == Severity::critical);
  }
  SECTION("an excess the leader counts as non-voting, one address, or IP literals prove nothing") {
    facts.probes[1].mntr->facts.synced_non_voting_followers = 1;
    facts.probes[5].srvr_exchange.peer = facts.probes[3].srvr_exchange.peer;
    auto report = judge(facts);
    CHECK(find(report, "duplicate-id")->severity == Severity::warning);
    facts.probes[5].srvr_exchange.peer = "10.1.0.6";
    facts.probes[3].address.host = "10.1.0.4";
    facts.probes[5].address.host = "10.1.0.6";
    auto literals = judge(facts);
    CHECK(find(literals, "duplicate-id")->severity == Severity::warning);
  }
}

TEST_CASE("ids: no count exceeds its whole: a second server on an id is not one more voter", "[ids]") {
  auto report = judge(pzoo3_on_id_4());
  CHECK(report.serving_voters == 5);
  CHECK(report.expected_voters == 5);
  // The leader's count no longer proves a follower synced: one of its five may be the intruder.
  CHECK(report.servers.back().name == "pzoo-3");
  CHECK(report.servers.back().synced != true);
}

// Every restart verdict refuses while two listed servers claim one id, proved two servers or not:
// each count the restart rules make assumes one vote an id.
TEST_CASE("ids: no restart verdict while two listed servers claim one id", "[ids]") {
  auto facts = pzoo3_on_id_4();
  auto expect_refused = [](const Report& report) {
    auto why = id_collision(report);
    REQUIRE(why);
    CHECK_THAT(*why, Contains("server id 4 is reported by zoo-0 and pzoo-3: restart nothing until every server has "
                              "an id of its own"));
    for (const auto* name : {"pzoo-0", "pzoo-1", "pzoo-3"}) {
      auto safety = restart_safety(report, name, {});
      CHECK_FALSE(safety.safe);
      CHECK(safety.reason == *why);
    }
    CHECK_FALSE(restart_safety(report, std::vector<std::string>{"pzoo-0", "zoo-1"}, {}).safe);
    CHECK_FALSE(plan_roll(report, {}).all_safe());
    CHECK(plan_membership(report, {{1, "a"}, {2, "b"}, {3, "c"}}).refusal == *why);
  };
  SECTION("proved: critical") { expect_refused(judge(facts)); }
  SECTION("not proved (one list, one address, no count): a warning, and still refused") {
    facts.probes[1].mntr.reset();
    for (auto& probe : facts.probes) probe.srvr_exchange.peer.clear();
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::degraded);
    expect_refused(report);
  }
  SECTION("each server its own id: no refusal") {
    facts.probes.pop_back();
    auto report = judge(facts);
    CHECK_FALSE(id_collision(report));
    CHECK(restart_safety(report, "pzoo-0", {}).safe);
  }
}

// The first moment of the seed's collision: zoo-0 (id 4) leads and hangs up on pzoo-3, which then
// answers "not serving" and names no id. Restarting zoo-0 would let it in as a second server 4.
TEST_CASE("ids: a server outside the list that does not serve may hold a listed id: restarts refused", "[ids]") {
  auto facts = named_five({1, 2, 3, 4, 5});
  facts.probes[1].srvr->facts.mode = Mode::follower;
  facts.probes[3].srvr->facts.mode = Mode::leader;
  facts.round_trip = round_trip(facts.probes, "zoo-0", 1);
  facts.probes.push_back(not_serving("pzoo-3"));
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  CHECK(report.serving_voters == 5);
  auto* outside = find(report, "not-serving");
  REQUIRE(outside);
  CHECK_THAT(outside->message, Contains("6 servers are listed where the membership has 5: if pzoo-3 is the one with "
                                        "no place in it, it runs with a listed server's id"));
  auto safety = restart_safety(report, "zoo-0", {});
  CHECK_FALSE(safety.safe);
  CHECK_THAT(safety.reason, Contains("pzoo-3 does not serve and names no id, and 6 servers are listed where the "
                                     "membership has 5"));
  SECTION("its id known, the leader's: named as such") {
    report.servers.back().id = 4;  // as the AdminServer would have told it
    auto why = id_collision(report);
    REQUIRE(why);
    CHECK_THAT(*why, Contains("server id 4 is reported by zoo-0 and pzoo-3"));
  }
  SECTION("one of the listed five not serving, ids unknown: a restart is judged as usual") {
    facts.probes.pop_back();
    facts.probes[4] = not_serving("zoo-1");
    auto five = judge(facts);
    CHECK_FALSE(id_collision(five));
    CHECK(restart_safety(five, "pzoo-0", {}).safe);
  }
}

// A leader cut off from every follower (its pod's traffic dropped): for its sync limit it still says
// it leads, while the followers have left it and answer on epoch 0. The hint says that, not "slow".
TEST_CASE("round trip: a write that timed out beside followers at zxid 0x0 names the lost followers") {
  auto facts = healthy_five();
  for (auto& probe : facts.probes)
    probe.srvr->facts.zxid = Zxid{probe.srvr->facts.mode == Mode::leader ? 0x500000006ULL : 0ULL};
  facts.round_trip->write_error = ZkError::deadline_exceeded;
  facts.round_trip->write_zxid.reset();
  facts.round_trip->reads.clear();
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  auto* slow = find(report, "write-timed-out");
  REQUIRE(slow);
  CHECK_THAT(slow->message,
             Contains("pzoo-1 says it leads on epoch 5, but 4 of its followers answer with no zxid at all: pzoo-0 "
                      "(epoch 0, zxid 0x0)") &&
                 Contains("pzoo-1 has lost its followers") && !Contains("may be slow"));
  REQUIRE(report.round_trip);
  CHECK(report.round_trip->reads_attempted == 0);
  SECTION("right after an election, followers on the last epoch or 0x0: not lost") {
    for (auto& probe : facts.probes)
      if (probe.srvr->facts.mode == Mode::follower) probe.srvr->facts.zxid = Zxid{0x40000000cULL};
    auto lagging = judge(facts);
    CHECK_THAT(find(lagging, "write-timed-out")->message, !Contains("lost its followers"));
    facts.probes[1].srvr->facts.zxid = Zxid{0x500000000ULL};  // nothing applied in its epoch yet
    for (auto& probe : facts.probes)
      if (probe.srvr->facts.mode == Mode::follower) probe.srvr->facts.zxid = Zxid{0};
    auto fresh = judge(facts);
    CHECK_THAT(find(fresh, "write-timed-out")->message, !Contains("lost its followers"));
  }
  SECTION("followers on the leader's epoch: slow, or cut off, both said") {
    for (auto& probe : facts.probes) probe.srvr->facts.zxid = Zxid{0x500000006ULL};
    auto same = judge(facts);
    CHECK_THAT(find(same, "write-timed-out")->message,
               Contains("the quorum may be slow (a cold disk, a loaded leader), or pzoo-1 may be cut off from its "
                        "followers"));
  }
}
