#include <algorithm>

#include <catch2/catch.hpp>

#include "model/judge/ledger.hpp"
#include "model/judge/ledger_update.hpp"
#include "model/judge/restart_plan.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

// A healthy ensemble on `epoch` whose round trip also read the marker (czxid, content) everywhere.
EnsembleFacts with_marker(std::uint32_t epoch, std::optional<std::uint64_t> marker_czxid, std::string content = "m") {
  auto facts = healthy_five();
  for (auto& probe : facts.probes) probe.srvr->facts.zxid = Zxid{(std::uint64_t{epoch} << 32) | 5};
  facts.round_trip = round_trip(facts.probes, "pzoo-1", epoch);
  facts.round_trip->marker_path = "/zkverify/marker";
  for (auto& read : facts.round_trip->reads) {
    read.marker_error = marker_czxid ? ZkError::ok : ZkError::no_node;
    if (marker_czxid) read.marker_czxid = Zxid{*marker_czxid};
    read.marker_data = content;
  }
  return facts;
}

LedgerOutcome run(const EnsembleFacts& facts, const std::optional<Ledger>& previous) {
  return apply_ledger(facts, judge(facts), previous, "2026-11-30T12:00:00Z");
}

}  // namespace

TEST_CASE("first ledger run: the marker is adopted, the high-water mark recorded") {
  auto out = run(with_marker(1, 0x100000003), std::nullopt);
  REQUIRE(out.next.marker);
  CHECK(out.next.marker->czxid.value == 0x100000003);
  CHECK(out.next.marker->path == "/zkverify/marker");
  CHECK(out.next.high_zxid.value == 0x100000007);
  CHECK(out.next.leader == "pzoo-1");
  CHECK(out.next.servers.size() == 5);
  CHECK(find(out.findings, "marker-recorded"));
  CHECK_FALSE(find(out.findings, "data-loss"));
}

TEST_CASE("a later run: progress is fine, an epoch change is only news") {
  auto first = run(with_marker(1, 0x100000003), std::nullopt).next;
  auto out = run(with_marker(2, 0x100000003), first);
  CHECK(out.findings.size() == 1);
  CHECK(find(out.findings, "epoch-changed"));
  CHECK(out.next.high_zxid.epoch() == 2);
}

TEST_CASE("zxid going backwards is data loss, sticky, and the high-water mark is kept") {
  auto first = run(with_marker(3, 0x300000001), std::nullopt).next;
  auto out = run(with_marker(1, 0x300000001), first);
  auto* loss = find(out.findings, "data-loss");
  REQUIRE(loss);
  CHECK(loss->severity == Severity::critical);
  CHECK_THAT(loss->message,
             Contains("0x300000007 (epoch 3) was seen before, now the highest is 0x100000007 (epoch 1)"));
  CHECK(out.next.high_zxid.value == 0x300000007);
  REQUIRE(out.next.data_loss);

  // Even once the zxid has climbed past the old mark, the alarm stays until --reset-state.
  auto later = run(with_marker(4, 0x300000001), out.next);
  CHECK_THAT(find(later.findings, "data-loss")->message, Contains("until --reset-state"));
}

TEST_CASE("the marker gone or recreated is data loss, naming the servers") {
  auto first = run(with_marker(1, 0x100000003), std::nullopt).next;
  auto gone = run(with_marker(1, std::nullopt), first);
  REQUIRE(find(gone.findings, "data-loss"));
  CHECK(find(gone.findings, "data-loss")->severity == Severity::critical);
  CHECK_THAT(find(gone.findings, "data-loss")->message, Contains("is gone on pzoo-0, pzoo-1, pzoo-2, zoo-0, zoo-1"));
  CHECK(gone.next.data_loss);
  auto recreated = run(with_marker(1, 0x100000009), first);
  REQUIRE(find(recreated.findings, "data-loss"));
  CHECK(find(recreated.findings, "data-loss")->severity == Severity::critical);
  CHECK_THAT(find(recreated.findings, "data-loss")->message, Contains("not the one recorded"));
  auto rewritten = run(with_marker(1, 0x100000003, "other"), first);
  REQUIRE(find(rewritten.findings, "data-loss"));
  CHECK(find(rewritten.findings, "data-loss")->severity == Severity::critical);
}

TEST_CASE("a marker that cannot be read is a warning, not data loss") {
  auto first = run(with_marker(1, 0x100000003), std::nullopt).next;
  auto facts = with_marker(1, 0x100000003);
  facts.round_trip->reads[2].marker_error = ZkError::deadline_exceeded;
  auto out = run(facts, first);
  REQUIRE(find(out.findings, "marker-unread"));
  CHECK(find(out.findings, "marker-unread")->server == "pzoo-2");
  CHECK(find(out.findings, "marker-unread")->severity == Severity::warning);
  CHECK_FALSE(find(out.findings, "data-loss"));
  CHECK_FALSE(out.next.data_loss);
}

TEST_CASE("no server returning the marker is said, never skipped silently") {
  auto first = run(with_marker(1, 0x100000003), std::nullopt).next;
  auto facts = with_marker(1, 0x100000003);
  for (auto& read : facts.round_trip->reads) read.marker_error = ZkError::not_attempted;
  auto out = run(facts, first);
  auto* unread = find(out.findings, "marker-unread");
  REQUIRE(unread);
  CHECK(unread->server.empty());
  CHECK(unread->severity == Severity::warning);
  CHECK_THAT(unread->message, Contains("no server returned the durability marker /zkverify/marker"));

  facts.round_trip.reset();  // no serving server: no round trip at all
  CHECK(find(run(facts, first).findings, "marker-unread"));
  CHECK_FALSE(find(run(with_marker(1, 0x100000003), first).findings, "marker-unread"));
}

TEST_CASE("node count halving is a warning, a leader change and membership change are news") {
  auto facts = with_marker(1, 0x100000003);
  for (auto& probe : facts.probes) probe.srvr->facts.node_count = 400;
  auto first = run(facts, std::nullopt).next;
  CHECK(first.node_count == 400);

  auto later = with_marker(1, 0x100000003);
  for (auto& probe : later.probes) probe.srvr->facts.node_count = 150;
  later.probes[1].srvr->facts.mode = Mode::follower;
  later.probes[2].srvr->facts.mode = Mode::leader;
  ConfFacts conf;
  conf.members = {{1, "h:1", "h:2", "participant", ""}};
  later.probes[0].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  first.membership = {"server.1=h:1:2:participant;", "server.9=h:1:2:participant;"};
  auto out = run(later, first);
  REQUIRE(find(out.findings, "node-count-drop"));
  CHECK(find(out.findings, "node-count-drop")->severity == Severity::warning);
  CHECK_THAT(find(out.findings, "node-count-drop")->message, Contains("150 znodes; the last run saw 400"));
  CHECK(find(out.findings, "leader-changed")->severity == Severity::info);
  CHECK(find(out.findings, "membership-changed")->severity == Severity::info);
  CHECK_THAT(find(out.findings, "leader-changed")->message, Contains("from pzoo-1 to pzoo-2"));
  CHECK_THAT(find(out.findings, "membership-changed")->message, Contains("removed [server.9=h:1:2:participant;]"));
}

TEST_CASE("node count: a drop below half is a warning only from 100 znodes on") {
  // Node counts of the leader in the last run and now: a drop is a warning only from the floor of 100.
  auto drop_after = [](std::int64_t before, std::int64_t now) {
    auto facts = with_marker(1, 0x100000003);
    for (auto& probe : facts.probes) probe.srvr->facts.node_count = before;
    auto first = run(facts, std::nullopt).next;
    for (auto& probe : facts.probes) probe.srvr->facts.node_count = now;
    return run(facts, first).findings;
  };
  CHECK_FALSE(find(drop_after(99, 10), "node-count-drop"));
  REQUIRE(find(drop_after(100, 49), "node-count-drop"));
  CHECK(find(drop_after(100, 49), "node-count-drop")->severity == Severity::warning);
  CHECK(find(drop_after(100, 49), "node-count-drop")->server == "pzoo-1");
  CHECK_FALSE(find(drop_after(100, 50), "node-count-drop"));  // half is not below half
}

TEST_CASE("the ledger's JSON round-trips, and a damaged one is named") {
  auto ledger = run(with_marker(2, 0x200000001), std::nullopt).next;
  ledger.restarted = {"zoo-1"};
  ledger.data_loss = DataLoss{"then", "what"};
  ledger.last_election = Election{5200, "pzoo-1", "2026-12-07T18:00:00Z"};
  auto back = ledger_from_json(to_json(ledger));
  CHECK(to_json(back) == to_json(ledger));
  REQUIRE(back.last_election);
  CHECK(back.last_election->leaderless_ms == 5200);
  auto older = to_json(ledger);
  older.erase("last_election");  // a ledger written before it existed
  CHECK_FALSE(ledger_from_json(older).last_election.has_value());
  older["last_election"] = {{"leaderless_ms", "long"}, {"during", "pzoo-1"}, {"at", "then"}};
  CHECK_THROWS_WITH(ledger_from_json(older), Contains("last_election.leaderless_ms"));

  auto json = to_json(ledger);
  json["high_zxid"] = "12";
  CHECK_THROWS_WITH(ledger_from_json(json), Contains("not a hex zxid"));
  json.erase("high_zxid");
  CHECK_THROWS_WITH(ledger_from_json(json), Contains("missing field 'high_zxid'"));
  CHECK_THROWS_WITH(ledger_from_json(nlohmann::json{{"format", "other/9"}}),
                    Contains("expected \"zkverify-ledger/1\""));
  CHECK_THROWS_WITH(ledger_from_json(nlohmann::json::array()), Contains("not a JSON object"));
}

TEST_CASE("restart order: down first, then followers, the leader last") {
  auto facts = healthy_five();
  facts.probes[3] = unreachable("zoo-0");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto steps = restart_order(judge(facts));
  std::vector<std::string> names;
  for (const auto& step : steps) names.push_back(step.name);
  CHECK(names == std::vector<std::string>{"zoo-0", "pzoo-0", "pzoo-2", "zoo-1", "pzoo-1"});
  CHECK_THAT(steps.front().reason, Contains("unreachable"));
  CHECK_THAT(steps.back().reason, Contains("leader"));
}

TEST_CASE("restart order: down first, then observers, then followers, the leader last, list order within each") {
  auto facts = healthy_five();
  facts.probes[4].srvr->facts.mode = Mode::observer;  // listed before a follower, restarted before it
  facts.probes[3].srvr->facts.mode = Mode::observer;
  facts.probes[2] = unreachable("pzoo-2");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto steps = restart_order(judge(facts));
  std::vector<std::string> names;
  for (const auto& step : steps) names.push_back(step.name);
  CHECK(names == std::vector<std::string>{"pzoo-2", "zoo-0", "zoo-1", "pzoo-0", "pzoo-1"});
  REQUIRE(steps.size() == 5);
  CHECK_THAT(steps[0].reason, Contains("unreachable"));
  CHECK(steps[1].reason == "observer: not a voter");
  CHECK(steps[2].reason == "observer: not a voter");
  CHECK(steps[3].reason == "follower");
  CHECK_THAT(steps[4].reason, Contains("leader"));
}

TEST_CASE("safe to restart: the quorum of synced voters") {
  auto facts = healthy_five();
  auto report = judge(facts);
  auto follower = restart_safety(report, "pzoo-0", {});
  CHECK(follower.safe);
  CHECK(follower.reason == "5 synced voters of 5; without pzoo-0 4 remain, a quorum needs 3");

  facts.probes[3] = unreachable("zoo-0");
  facts.probes[4] = not_serving("zoo-1");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  report = judge(facts);
  REQUIRE(report.verdict == Verdict::degraded);
  auto refused = restart_safety(report, "pzoo-0", {});
  CHECK_FALSE(refused.safe);
  CHECK(refused.reason ==
        "2 of 5 voters down or not proven synced: restarting pzoo-0 would leave 2 synced; a quorum needs 3");
  CHECK(restart_safety(report, "zoo-0", {}).safe);  // down already: restarting it costs nothing
}

TEST_CASE("safe to restart: a critical ensemble restarts nothing") {
  auto facts = healthy_five();
  facts.round_trip->reads[0].error = ZkError::deadline_exceeded;  // pzoo-0 serves but did not read the write
  facts.round_trip->reads[2].bytes_match = false;
  auto report = judge(facts);
  REQUIRE(report.verdict == Verdict::critical);
  auto refused = restart_safety(report, "zoo-0", {});
  CHECK_FALSE(refused.safe);
  CHECK_THAT(refused.reason, Contains("critical"));
}

TEST_CASE("safe to restart: unproven sync is not sync") {
  auto facts = healthy_five();
  facts.round_trip.reset();  // --no-write, and no mntr: nothing proves the followers synced
  facts.write_skipped = true;
  auto report = judge(facts);
  REQUIRE(report.verdict == Verdict::healthy);
  CHECK_FALSE(report.servers[0].synced.has_value());
  CHECK(report.servers[1].synced == true);  // the leader
  auto refused = restart_safety(report, "pzoo-0", {});
  CHECK_FALSE(refused.safe);
  CHECK(refused.reason ==
        "4 of 5 voters down or not proven synced: restarting pzoo-0 would leave 1 synced; a quorum needs 3");

  // The leader's mntr counting every follower as synced is proof too.
  facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, MntrFacts{"leader", 5, 4, 4, 5, {}, {}, {}}, {}};
  report = judge(facts);
  CHECK(report.servers[0].synced == true);
  CHECK(restart_safety(report, "pzoo-0", {}).safe);
  facts.probes[1].mntr->facts.synced_followers = 3;  // one follower not synced, and we cannot tell which
  CHECK_FALSE(restart_safety(judge(facts), "pzoo-0", {}).safe);
}

TEST_CASE("safe to restart: the leader, when every other voter is proven synced, and last in a recorded round") {
  auto report = judge(healthy_five());
  auto leader = restart_safety(report, "pzoo-1", {});
  CHECK(leader.safe);
  CHECK_THAT(leader.reason, Contains("An election follows; in a rolling restart the leader goes last"));

  auto in_round = restart_safety(report, "pzoo-1", {"pzoo-0"});
  CHECK_FALSE(in_round.safe);
  CHECK_THAT(in_round.reason, Contains("still has pzoo-2, zoo-0, zoo-1 to restart first"));
  CHECK(restart_safety(report, "pzoo-1", {"pzoo-0", "pzoo-2", "zoo-0", "zoo-1"}).safe);

  auto facts = healthy_five();
  facts.round_trip->reads.pop_back();  // zoo-1 was not read through: its sync is not proven
  auto without_zoo1 = judge(facts);
  REQUIRE_FALSE(without_zoo1.servers[4].synced.has_value());
  CHECK(restart_safety(without_zoo1, "pzoo-0", {}).safe);  // 4 proven; 3 remain
  auto unproven = restart_safety(without_zoo1, "pzoo-1", {});
  CHECK_FALSE(unproven.safe);
  CHECK_THAT(unproven.reason, Contains("pzoo-1 is the leader; zoo-1 not proven in sync"));
}
