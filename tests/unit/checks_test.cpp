#include <algorithm>

#include <catch2/catch.hpp>

#include "model/judge/checks.hpp"
#include "model/render/report_view.hpp"
#include "synthetic.hpp"
#include "verifier/commands/exit_codes.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

TEST_CASE("a healthy ensemble: exit 0, leader named, ids from the sessions") {
  auto report = judge(healthy_five());
  CHECK(report.verdict == Verdict::healthy);
  CHECK(verifier::exit_code(report.verdict) == verifier::kExitHealthy);
  CHECK(report.leader == "pzoo-1");
  CHECK(report.expected_voters == 5);
  CHECK(report.serving_voters == 5);
  CHECK(report.servers[0].id == 1);                     // from the session id's top byte
  CHECK(report.servers[0].zxid->value == 0x100000007);  // the write it read back is newer than srvr's
  REQUIRE(report.round_trip);
  CHECK(report.round_trip->reads_ok == 5);
  for (const auto& finding : report.findings) CHECK(finding.severity == Severity::info);
}

TEST_CASE("one server down: degraded, not safe to restart another") {
  auto facts = healthy_five();
  facts.probes[4] = unreachable("zoo-1");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  CHECK(verifier::exit_code(report.verdict) == verifier::kExitDegraded);
  REQUIRE(find(report, "unreachable"));
  CHECK(find(report, "unreachable")->server == "zoo-1");
  CHECK(report.servers[4].state == ServerState::unreachable);
  CHECK(report.servers[4].error == "connection refused");
  CHECK_THAT(find(report, "unreachable")->message, !Contains("still counts"));  // no mntr: nothing to say
}

TEST_CASE("one server unreachable that the leader still counts synced: the finding says what that can mean") {
  auto facts = healthy_five();
  facts.probes[4] = unreachable("zoo-1");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  MntrFacts mntr;
  mntr.synced_followers = 4;
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, mntr, {}};
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  CHECK_THAT(find(report, "unreachable")->message,
             Contains("the leader still counts every other voter synced") && Contains("only zkverify cannot reach it"));

  facts.probes.push_back(unreachable("extra"));  // a listed host that is no voter of the leader's
  mntr.quorum_size = 5;
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, mntr, {}};
  auto beside = judge(facts);
  REQUIRE(beside.expected_voters == 5);
  for (const auto& finding : beside.findings)
    if (finding.code == FindingCode::unreachable) CHECK_THAT(finding.message, !Contains("still counts"));
  facts.probes.pop_back();

  mntr.synced_followers = 3;  // the leader dropped it: down, as far as the ensemble knows
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, mntr, {}};
  CHECK_THAT(find(judge(facts), "unreachable")->message, !Contains("still counts"));
}

TEST_CASE("three of five not serving: no quorum, critical") {
  auto facts = healthy_five();
  facts.probes = {unreachable("pzoo-0"), unreachable("pzoo-1"), unreachable("pzoo-2"), not_serving("zoo-0"),
                  not_serving("zoo-1")};
  facts.round_trip.reset();
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::critical);
  CHECK(verifier::exit_code(report.verdict) == verifier::kExitCritical);
  REQUIRE(find(report, "no-quorum"));
  CHECK_THAT(find(report, "no-quorum")->message, Contains("0 of 5 voters are serving; a quorum needs 3"));
  CHECK(find(report, "no-leader"));
  CHECK(report.findings.front().severity == Severity::critical);  // worst first
  CHECK_FALSE(find(report, "sync-unverified"));                   // noise when nothing serves
  CHECK(report.servers[3].state == ServerState::not_serving);
  CHECK_THAT(report.servers[3].note, Contains("imok"));
}

TEST_CASE("two leaders: critical, both named, no leader reported") {
  auto facts = healthy_five();
  facts.probes[0].srvr->facts.mode = Mode::leader;
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::critical);
  REQUIRE(find(report, "multiple-leaders"));
  CHECK_THAT(find(report, "multiple-leaders")->message, Contains("pzoo-0, pzoo-1"));
  CHECK_FALSE(report.leader);
}

TEST_CASE("quorum holds with two of five down, but it is degraded") {
  auto facts = healthy_five();
  facts.probes[3] = unreachable("zoo-0");
  facts.probes[4] = unreachable("zoo-1");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  CHECK(report.serving_voters == 3);
  CHECK_FALSE(find(report, "no-quorum"));
}

TEST_CASE("standalone and read-only servers in an ensemble are flagged") {
  auto facts = healthy_five();
  facts.probes[2].srvr->facts.mode = Mode::standalone;
  facts.probes[3].srvr->facts.mode = Mode::read_only;
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  CHECK(find(report, "standalone")->server == "pzoo-2");
  CHECK(find(report, "read-only")->server == "zoo-0");
}

TEST_CASE("leader's mntr: fewer synced followers than voters is degraded") {
  auto facts = healthy_five();
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, MntrFacts{"leader", 5, 3, 3, 5, {}, {}, {}}, {}};
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::degraded);
  REQUIRE(find(report, "followers-not-synced"));
  CHECK_THAT(find(report, "followers-not-synced")->message, Contains("3 synced followers; the ensemble has 4"));
  CHECK(report.servers[1].note == "synced followers 3/4");
}

TEST_CASE("round trip: reads that fail beside a majority's reads are degraded, without one critical") {
  auto facts = healthy_five();
  SECTION("read timed out on one server: four of five voters read the committed write back") {
    facts.round_trip->reads[2].error = ZkError::deadline_exceeded;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::degraded);
    REQUIRE(find(report, "read-back-failed"));
    CHECK(find(report, "read-back-failed")->server == "pzoo-2");
    CHECK_THAT(find(report, "read-back-failed")->message, Contains("(4 of 5 voters read it back)"));
    CHECK_FALSE(find(report, "round-trip-failed"));
    CHECK(report.round_trip->reads_ok == 4);
  }
  SECTION("reads failed on three of five: fewer than a majority read it back") {
    for (int i : {0, 2, 4}) facts.round_trip->reads[i].error = ZkError::deadline_exceeded;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    CHECK(find(report, "round-trip-failed"));
    CHECK_FALSE(find(report, "read-back-failed"));
  }
  SECTION("reads failed on two of four voters: two is not a majority of four") {
    facts.probes.pop_back();
    facts.round_trip->reads.pop_back();
    for (int i : {0, 2}) facts.round_trip->reads[i].error = ZkError::connection_loss;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    CHECK(find(report, "round-trip-failed"));
  }
}

TEST_CASE("round trip: a failed write is critical, a stale read too") {
  auto facts = healthy_five();
  SECTION("write failed") {
    facts.round_trip->write_error = ZkError::connection_loss;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    CHECK_THAT(find(report, "round-trip-failed")->message, Contains("write through pzoo-1 failed: connection_loss"));
  }
  SECTION("other bytes") {
    facts.round_trip->reads[3].bytes_match = false;
    auto report = judge(facts);
    REQUIRE(find(report, "stale-read"));
    CHECK(find(report, "stale-read")->server == "zoo-0");
    CHECK(find(report, "stale-read")->severity == Severity::critical);
    CHECK(report.verdict == Verdict::critical);
  }
  SECTION("namespace parent missing") {
    facts.round_trip->namespace_error = ZkError::no_node;
    facts.round_trip->write_error = ZkError::not_attempted;
    CHECK_THAT(find(judge(facts), "round-trip-failed")->message, Contains("parent does not exist"));
  }
  SECTION("the writer's close abandoned: the node waits for the session's expiry, and that is no failure") {
    facts.round_trip->removal_error = ZkError::deadline_exceeded;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::healthy);
    REQUIRE(find(report, "cleanup-deferred"));
    CHECK(find(report, "cleanup-deferred")->severity == Severity::info);
    CHECK(find(report, "cleanup-deferred")->server == "pzoo-1");
    CHECK_THAT(find(report, "cleanup-deferred")->message,
               Contains("was not removed (deadline_exceeded); it is ephemeral and goes when pzoo-1 ends"));
  }
  SECTION("--no-write is said, and is not a failure") {
    facts.round_trip.reset();
    facts.write_skipped = true;
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::healthy);
    CHECK(find(report, "write-skipped"));
    CHECK_FALSE(report.round_trip);
  }
}

TEST_CASE("epochs: a mismatch after the write is degraded, without a write only a hint") {
  auto facts = healthy_five();
  facts.probes[0].srvr->facts.zxid = Zxid{0x200000001};
  SECTION("with the write in epoch 1") { CHECK(find(judge(facts), "epoch-mismatch")->severity == Severity::warning); }
  SECTION("no write") {
    facts.round_trip.reset();
    facts.write_skipped = true;
    auto report = judge(facts);
    CHECK(find(report, "epoch-mismatch")->severity == Severity::info);
    CHECK(report.verdict == Verdict::healthy);
  }
}

TEST_CASE("membership: disagreement, unknown and unlisted ids, duplicate ids") {
  auto facts = healthy_five();
  auto members = [](int count) {
    ConfFacts conf;
    for (int id = 1; id <= count; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", "h:3"});
    return conf;
  };
  SECTION("servers hold lists whose majorities can be disjoint: 5 and 3") {
    for (int i = 0; i < 5; ++i) {
      auto conf = members(i == 4 ? 3 : 5);
      conf.server_id = i + 1;
      facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
    }
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    REQUIRE(find(report, "split-brain-possible"));
    CHECK_THAT(find(report, "split-brain-possible")->message,
               Contains("zoo-1 holds a list (3 voters: ids 1, 2, 3)") &&
                   Contains("a majority of the first (ids 1, 4, 5) and one of the second (ids 2, 3) share no server"));
    CHECK_FALSE(find(report, "membership-mismatch"));
  }
  SECTION("the same voters at other addresses") {
    for (int i = 0; i < 5; ++i) {
      auto conf = members(5);
      if (i == 4) conf.members[0].quorum_address = "elsewhere:1";
      conf.server_id = i + 1;
      facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
    }
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::degraded);
    CHECK_THAT(find(report, "membership-mismatch")->message, Contains("zoo-1 holds a list (5 voters"));
  }
  SECTION("a listed server outside the membership, and members not listed") {
    facts.probes.pop_back();
    facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
    for (int i = 0; i < 4; ++i) {
      auto conf = members(5);
      conf.server_id = i == 3 ? 9 : i + 1;
      facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
    }
    auto report = judge(facts);
    CHECK(find(report, "membership-unknown")->server == "zoo-0");
    CHECK_THAT(find(report, "membership-unlisted")->message, Contains("ids not listed: 4, 5"));
  }
  SECTION("the same id twice") {
    facts.round_trip->reads[4].session_server_id = 4;
    CHECK_THAT(find(judge(facts), "duplicate-id")->message, Contains("id 4 is reported by zoo-0 and zoo-1"));
  }
}

// A reconfig's version is its zxid, committed by a quorum of the list before: whoever still holds
// that list is behind it, too few to elect alone. Static lists all report version 0.
TEST_CASE("membership after a dynamic reconfig: an older version is behind, not a second ensemble") {
  auto facts = healthy_five();
  auto list = [](int count, std::int64_t version) {
    ConfFacts conf;
    for (int id = 1; id <= count; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", "h:3"});
    conf.config_version = version;
    return conf;
  };
  auto hold = [&](int count, std::int64_t newest, std::int64_t older) {
    for (int i = 0; i < 5; ++i) {
      auto conf = i == 4 ? list(5, older) : list(count, newest);
      conf.server_id = i + 1;
      facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
    }
  };
  SECTION("5 to 7 by one reconfig, zoo-1 not yet on it: warning, named") {
    hold(7, 0x100000009, 0x100000003);
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::degraded);
    CHECK_FALSE(find(report, "split-brain-possible"));
    REQUIRE(find(report, "config-behind"));
    CHECK(find(report, "config-behind")->server == "zoo-1");
    CHECK_THAT(find(report, "config-behind")->message,
               Contains("zoo-1 holds version 100000003 (5 voters") &&
                   Contains("the newest, pzoo-0, pzoo-1, pzoo-2, zoo-0 hold version 100000009 (7 voters"));
  }
  SECTION("two lists under one version: no history, the static rule") {
    hold(7, 0x100000009, 0x100000009);
    CHECK(find(judge(facts), "split-brain-possible"));
  }
  SECTION("the same lists written by hand (version 0 beside a reconfig's): the static rule") {
    hold(7, 0x100000009, 0);
    CHECK(find(judge(facts), "split-brain-possible"));
    CHECK_FALSE(find(judge(facts), "config-behind"));
  }
  SECTION("all on the newest: one list") {
    hold(7, 0x100000009, 0x100000009);
    facts.probes[4].conf->facts.members = facts.probes[0].conf->facts.members;
    auto report = judge(facts);
    CHECK_FALSE(find(report, "config-behind"));
    CHECK(report.membership_views.size() == 1);
    CHECK(report.expected_voters == 7);
  }
}

TEST_CASE("expected voters come from the membership: observers do not count") {
  auto facts = healthy_five();
  ConfFacts conf;
  for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", id == 5 ? "observer" : "participant", ""});
  facts.probes[0].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  facts.probes[4].srvr->facts.mode = Mode::observer;
  auto report = judge(facts);
  CHECK(report.expected_voters == 4);
  CHECK(report.serving_voters == 4);
  CHECK(report.verdict == Verdict::healthy);
}

TEST_CASE("refused words: one info finding with the zoo.cfg line") {
  auto facts = healthy_five();
  facts.probes[0].refused_words = {"mntr", "conf"};
  facts.probes[1].refused_words = {"mntr"};
  auto report = judge(facts);
  auto* finding = find(report, "not-whitelisted");
  REQUIRE(finding);
  CHECK(finding->severity == Severity::info);
  CHECK_THAT(finding->message, Contains("mntr on pzoo-0,pzoo-1"));
  CHECK_THAT(finding->message, Contains("4lw.commands.whitelist=srvr,ruok,mntr,conf,isro"));
  CHECK(report.verdict == Verdict::healthy);
}

TEST_CASE("observers without a membership: voters are the listed servers less the observers, and it says so") {
  // 3 voters + 2 observers under a ruok-only whitelist: srvr alone. One follower down keeps 2 of 3.
  auto facts = healthy_five();
  facts.probes[3].srvr->facts.mode = Mode::observer;
  facts.probes[4].srvr->facts.mode = Mode::observer;
  facts.probes[2] = unreachable("pzoo-2");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  CHECK(report.expected_voters == 3);
  CHECK(report.serving_voters == 2);
  CHECK_FALSE(find(report, "no-quorum"));
  CHECK(report.verdict == Verdict::degraded);
  REQUIRE(find(report, "voters-counted"));
  CHECK(find(report, "voters-counted")->severity == Severity::info);
  CHECK_THAT(find(report, "voters-counted")->message, Contains("3 voters: the 5 servers listed less 2 observers"));

  // mntr's zk_quorum_size, where allowed, is the better estimate.
  facts.probes[0].mntr = Reply<MntrFacts>{ProbeError::ok, MntrFacts{"follower", 5, {}, {}, 3, {}, {}, {}}, {}};
  report = judge(facts);
  CHECK(report.expected_voters == 3);
  CHECK_THAT(find(report, "voters-counted")->message, Contains("from pzoo-0's mntr (zk_quorum_size)"));
}

TEST_CASE("the AdminServer's voting_view lists no observers: they are not unknown members") {
  auto facts = healthy_five();
  ConfFacts view;  // as parse_admin_voting_view gives it: voters only, client addresses only for itself
  view.voters_only = true;
  for (int id = 1; id <= 3; ++id) view.members.push_back({id, "h:1" + std::to_string(id), "h:2", "participant", ""});
  for (int i = 0; i < 5; ++i) {
    auto own = view;
    if (i < 3) own.members[static_cast<std::size_t>(i)].client_address = "127.0.0.1:2181";
    facts.probes[static_cast<std::size_t>(i)].conf = Reply<ConfFacts>{ProbeError::ok, own, {}};
    facts.probes[static_cast<std::size_t>(i)].conf->facts.server_id = i + 1;
  }
  facts.probes[3].srvr->facts.mode = Mode::observer;
  facts.probes[4].srvr->facts.mode = Mode::observer;
  auto report = judge(facts);
  CHECK(report.expected_voters == 3);
  CHECK_FALSE(find(report, "membership-mismatch"));  // each view names only its own client address
  CHECK_FALSE(find(report, "membership-unknown"));
  CHECK(report.verdict == Verdict::healthy);

  facts.probes[1].conf->facts.members[2].quorum_address = "elsewhere:1";  // a real disagreement still shows
  CHECK(find(judge(facts), "membership-mismatch"));
}

TEST_CASE("the leader not listed: followers serve, so a leader holds a quorum somewhere unlisted") {
  auto facts = healthy_five();
  ConfFacts conf;
  for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", ""});
  facts.probes.resize(3);  // pzoo-0..2 listed; the leader pzoo-1 is made a follower, ids 4 and 5 unlisted
  facts.probes[1].srvr->facts.mode = Mode::follower;
  for (int i = 0; i < 3; ++i) {
    facts.probes[static_cast<std::size_t>(i)].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
    facts.probes[static_cast<std::size_t>(i)].conf->facts.server_id = i + 1;
  }
  facts.round_trip.reset();
  facts.write_skipped = true;
  auto report = judge(facts);
  CHECK_FALSE(find(report, "no-leader"));
  REQUIRE(find(report, "leader-unlisted"));
  CHECK_THAT(find(report, "leader-unlisted")->message,
             Contains("it is not among the listed servers (the membership names ids 4, 5 that are not listed)"));
  CHECK(report.verdict == Verdict::degraded);

  for (auto& probe : facts.probes) probe.srvr = Reply<SrvrFacts>{ProbeError::not_serving, {}, {}};
  CHECK(find(judge(facts), "no-leader"));  // nobody follows anyone: no leader, as before
}

TEST_CASE("mixed versions, as in the middle of an upgrade: an info finding naming who runs what") {
  auto facts = healthy_five();
  facts.probes[3].srvr->facts.version = "3.9.2-e454e8c7283100c7caec6dcae2bc82aaecb63023, built on 2024-02-12 20:59 UTC";
  facts.probes[4].srvr->facts.version = "3.9.2-e454e8c7283100c7caec6dcae2bc82aaecb63023, built on 2024-02-12 20:59 UTC";
  auto report = judge(facts);
  REQUIRE(find(report, "mixed-versions"));
  CHECK(find(report, "mixed-versions")->severity == Severity::info);
  CHECK_THAT(find(report, "mixed-versions")->message,
             Contains("3.8.0 on pzoo-0, pzoo-1, pzoo-2; 3.9.2 on zoo-0, zoo-1"));
  CHECK(report.verdict == Verdict::healthy);
  CHECK_FALSE(find(judge(healthy_five()), "mixed-versions"));
}

namespace {

enum class VoterCount { membership, quorum_size, inferred };
enum class Write { committed, failed, skipped };

// 3 voters (pzoo-2 leads) and 2 observers, of which `down` are unreachable; the voters counted as
// `count` says, the round trip as `write` says.
EnsembleFacts three_voters_two_observers(const std::vector<std::size_t>& down, VoterCount count, Write write) {
  auto facts = healthy_five();
  facts.probes[1].srvr->facts.mode = Mode::follower;
  facts.probes[2].srvr->facts.mode = Mode::leader;
  facts.probes[3].srvr->facts.mode = Mode::observer;
  facts.probes[4].srvr->facts.mode = Mode::observer;
  if (count == VoterCount::membership) {
    ConfFacts conf;
    for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", id > 3 ? "observer" : "participant", ""});
    facts.probes[2].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  } else if (count == VoterCount::quorum_size) {
    facts.probes[2].mntr = Reply<MntrFacts>{ProbeError::ok, MntrFacts{"leader", 5, {}, {}, 3, {}, {}, {}}, {}};
  }
  for (auto index : down) facts.probes[index] = unreachable(facts.probes[index].address.name);
  facts.round_trip = round_trip(facts.probes, "pzoo-2", 1);
  if (write == Write::failed) {
    facts.round_trip->write_error = ZkError::connection_loss;
    facts.round_trip->write_zxid.reset();
    facts.round_trip->reads.clear();
  }
  if (write == Write::skipped) {
    facts.round_trip.reset();
    facts.write_skipped = true;
  }
  return facts;
}

}  // namespace

TEST_CASE("a committed write overrides a no-quorum computed from an estimated voter count: degraded, and why") {
  // The lab case: ruok-only whitelist, an observer (zoo-0) and a follower (pzoo-0) stopped.
  auto report = judge(three_voters_two_observers({0, 3}, VoterCount::inferred, Write::committed));
  CHECK(report.expected_voters == 4);  // zoo-0 cannot say it was an observer
  CHECK(report.serving_voters == 2);
  CHECK_FALSE(find(report, "no-quorum"));
  REQUIRE(find(report, "voters-uncertain"));
  CHECK(find(report, "voters-uncertain")->severity == Severity::warning);
  CHECK_THAT(find(report, "voters-uncertain")->message,
             Contains("the write through pzoo-2 was committed") && Contains("whitelist conf or mntr"));
  CHECK(report.verdict == Verdict::degraded);
  CHECK_THAT(render_text(report), Contains("degraded: leader pzoo-2, 2/4 voters serving (an estimate"));

  // With the ledger's memory of zoo-0 as an observer, the estimate is right: 2 of 3.
  auto facts = three_voters_two_observers({0, 3}, VoterCount::inferred, Write::committed);
  facts.remembered_observers = {"zoo-0"};
  report = judge(facts);
  CHECK(report.expected_voters == 3);
  CHECK_FALSE(find(report, "voters-uncertain"));
  CHECK_FALSE(find(report, "no-quorum"));
  CHECK_THAT(find(report, "voters-counted")->message, Contains("(zoo-0 as the ledger remembers: unreachable now)"));
  facts.probes[3] = server("zoo-0", Mode::follower, 0x100000006);  // a remembered role gives way to a seen one
  CHECK(judge(facts).expected_voters == 4);
}

TEST_CASE("the verdict, the headline and the findings agree for every voter count and every write outcome") {
  for (const auto& down : std::vector<std::vector<std::size_t>>{{0, 3}, {0, 1, 3}, {3}}) {
    for (auto count : {VoterCount::membership, VoterCount::quorum_size, VoterCount::inferred}) {
      for (auto write : {Write::committed, Write::failed, Write::skipped}) {
        auto report = judge(three_voters_two_observers(down, count, write));
        INFO("down " << down.size() << ", count " << static_cast<int>(count) << ", write " << static_cast<int>(write));
        bool short_of_quorum = report.serving_voters < report.expected_voters / 2 + 1;
        bool uncertain = count == VoterCount::inferred && write == Write::committed && short_of_quorum;
        CHECK(static_cast<bool>(find(report, "voters-uncertain")) == uncertain);
        CHECK(report.voters_uncertain == uncertain);
        CHECK(static_cast<bool>(find(report, "no-quorum")) == (short_of_quorum && !uncertain));
        if (find(report, "no-quorum")) CHECK(report.verdict == Verdict::critical);
        if (uncertain) CHECK(report.verdict == Verdict::degraded);
        auto text = render_text(report);
        CHECK(text.starts_with(std::string(to_string(report.verdict)) + ": "));
        CHECK((text.find("(an estimate of the voters") != std::string::npos) == uncertain);
        CHECK(report.expected_voters == (count == VoterCount::inferred ? 4 : 3));  // zoo-0, an observer, is down
      }
    }
  }
}

TEST_CASE("a server not serving beside a leader and a quorum: it cannot join them, and on 3.4 why it may wait") {
  auto facts = healthy_five();
  facts.probes[0] = not_serving("pzoo-0");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  REQUIRE(find(report, "not-serving"));
  CHECK_THAT(find(report, "not-serving")->message, Contains("while the others serve with leader pzoo-1") &&
                                                       Contains("another server's id") && !Contains("3.4 peers"));

  facts.probes[1].srvr->facts.version =
      "3.4.13-2d71af4dbe22557fda74f9a9b4309b15a7487f03, built on 06/29/2018 04:05 GMT";
  CHECK_THAT(find(judge(facts), "not-serving")->message,
             Contains("3.4 peers dial the one they looked its name up to") && Contains("restart the leader"));

  facts.probes[1] = unreachable("pzoo-1");  // no leader seen: nothing to say of the others
  facts.round_trip.reset();
  CHECK_THAT(find(judge(facts), "not-serving")->message, Contains("it has no quorum or is still joining"));
}
