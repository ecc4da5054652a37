// The smoke judgement on synthetic observations and reports: each case's failure path, and the
// figures (percentiles, sequence numbers).

#include <catch2/catch.hpp>

#include <algorithm>

#include "model/judge/checks.hpp"
#include "model/judge/smoke_judge.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using std::chrono::microseconds;
using synthetic::find_case;

namespace {

zkverify::CaseRun ran(std::vector<zkverify::SmokeStep> steps = {}) {
  zkverify::CaseRun run;
  run.ran = true;
  run.elapsed = microseconds(1500);
  run.steps = std::move(steps);
  return run;
}

// Observations of a suite where every case saw what it should, through servers a and b.
zkverify::SmokeObservations all_good() {
  using namespace zkverify;
  SmokeObservations seen;
  seen.run_path = "/zkverify/smoke-h-1-2";
  seen.servers = {"a", "b"};
  seen.prepare = {"create /zkverify/smoke-h-1-2", "a", ZkError::ok};
  seen.round_trip = {ran(), "a", {{"a", ZkError::ok, true}, {"b", ZkError::ok, true}}};
  seen.ephemeral = {ran(), "b", "/e", true, {{"a", ZkError::no_node}, {"b", ZkError::no_node}}};
  seen.watch = {
      ran(), "b", "a", WatchNotice{WatchKind::changed, "/w"}, microseconds(800), std::chrono::milliseconds(1)};
  seen.sequential = {
      ran(), {{"a", ZkError::ok, "/s/n-0000000000", Zxid{10}}, {"b", ZkError::ok, "/s/n-0000000001", Zxid{11}}}};
  seen.multi = {ran(),
                "a",
                ZkError::no_node,
                {ZkError::ok, ZkError::ok, ZkError::no_node},
                {{"/m-a", ZkError::no_node}, {"/m-b", ZkError::no_node}}};
  seen.cas = {ran(), "a", 1, ZkError::bad_version, "v1", "v1", 1};
  seen.move = {ran(), "b", "a", 0x0100000000000007, 0x0100000000000007, "a", ZkError::ok, ZkError::ok};
  for (const char* server : {"a", "b"}) {
    LatencySeen latency{ran(), server, {}};
    for (const char* op : {"create", "set", "get", "delete"})
      latency.ops.push_back({op, {microseconds(1000), microseconds(2000), microseconds(3000)}, 0, ZkError::ok});
    seen.latency.push_back(latency);
  }
  seen.cleanup = {"remove /zkverify/smoke-h-1-2", "a", ZkError::ok};
  return seen;
}

CaseResult judged(const zkverify::SmokeObservations& seen, const std::string& id, SmokeLimits limits = {}) {
  return find_case(judge_sessions(seen, limits), id);
}

}  // namespace

TEST_CASE("smoke judge: observations of a healthy suite pass every case", "[smoke]") {
  auto cases = judge_sessions(all_good(), {});
  CHECK(cases.size() == 10);
  for (const auto& one : cases) {
    INFO(one.id << ": " << one.message);
    CHECK(one.outcome == CaseOutcome::passed);
  }
  CHECK(find_case(cases, "round-trip").seconds == Approx(0.0015));
  CHECK(find_case(cases, "watch-fires").properties.front().second == "0.800");
}

TEST_CASE("smoke judge: the failure paths of reads, ephemerals, watches and sequences name what went wrong",
          "[smoke]") {
  auto seen = all_good();
  SECTION("a stale read") {
    seen.round_trip.reads[1].bytes_match = false;
    CHECK_THAT(judged(seen, "round-trip").message, Contains("b: read other bytes than written"));
  }
  SECTION("an ephemeral still visible after its session closed") {
    seen.ephemeral.after_close[0].error = ZkError::ok;
    CHECK_THAT(judged(seen, "ephemeral-cleanup").message, Contains("/e still exists on a"));
  }
  SECTION("a watch that did not fire") {
    seen.watch.notice.reset();
    CHECK_THAT(judged(seen, "watch-fires").message, Contains("did not fire"));
  }
  SECTION("a watch that reported a lost session") {
    seen.watch.notice->kind = zkverify::WatchKind::session_lost;
    CHECK_THAT(judged(seen, "watch-fires").message, Contains("lost session"));
  }
  SECTION("a sequence number given twice") {
    seen.sequential.creates[1].path = "/s/n-0000000000";
    CHECK_THAT(judged(seen, "sequential-order").message, Contains("given twice"));
  }
  SECTION("sequence numbers out of commit order") {
    std::swap(seen.sequential.creates[0].czxid, seen.sequential.creates[1].czxid);
    CHECK_THAT(judged(seen, "sequential-order").message, Contains("numbered lower"));
  }
  CHECK(count(judge_sessions(seen, {}), CaseOutcome::failed) == 1);
}

TEST_CASE("smoke judge: the failure paths of multi, versions, moves, steps and latency name what went wrong",
          "[smoke]") {
  auto seen = all_good();
  SECTION("a multi that half-applied") {
    seen.multi.creates_left[0].error = ZkError::ok;
    CHECK_THAT(judged(seen, "multi-atomic").message, Contains("applied some of its creates: /m-a exists"));
  }
  SECTION("a multi whose failing last operation succeeded") {
    seen.multi.multi_error = ZkError::ok;
    CHECK_THAT(judged(seen, "multi-atomic").message, Contains("succeeded"));
  }
  SECTION("a stale set not answered bad_version") {
    seen.cas.stale_set_error = ZkError::ok;
    CHECK_THAT(judged(seen, "cas-version").message, Contains("answered ok, not bad_version"));
  }
  SECTION("a refused set that changed the node") {
    seen.cas.version_after = 2;
    CHECK_THAT(judged(seen, "cas-version").message, Contains("changed the node"));
  }
  SECTION("a moved session with another id") {
    seen.move.id_after = 0x0200000000000001;
    CHECK_THAT(judged(seen, "session-move").message, Contains("id changed"));
  }
  SECTION("a moved session without its ephemeral") {
    seen.move.ephemeral_after = ZkError::no_node;
    CHECK_THAT(judged(seen, "session-move").message, Contains("ephemeral could not be read"));
  }
  SECTION("a failed step, with the ACL explained") {
    seen.round_trip.run.steps = {{"create /zkverify/x", "a", ZkError::no_auth}};
    CHECK_THAT(judged(seen, "round-trip").message, Contains("create /zkverify/x via a: no_auth (an ACL"));
  }
  SECTION("something left under the run path") {
    seen.left_behind = {"/zkverify/smoke-h-1-2/x", "/zkverify/smoke-h-1-2"};
    CHECK_THAT(judged(seen, "cleanup").message, Contains("left behind: /zkverify/smoke-h-1-2/x"));
  }
  SECTION("latency over --max-latency, with its figures") {
    auto latency = judged(seen, "latency/a", {std::chrono::milliseconds(2)});
    CHECK(latency.outcome == CaseOutcome::failed);
    CHECK_THAT(latency.message, Contains("create p99 3.000ms") && Contains("--max-latency 2ms"));
    CHECK_THAT(latency.figures, Contains("p50=2.000ms"));
    return;
  }
  SECTION("latency with failed operations") {
    seen.latency[1].ops[2].errors = 2;
    seen.latency[1].ops[2].first_error = ZkError::connection_loss;
    CHECK_THAT(judged(seen, "latency/b").message, Contains("get 2 of 5 (connection_loss)"));
  }
  SECTION("latency with an operation the C client gave up on") {
    seen.latency[1].ops[1].errors = 1;
    seen.latency[1].ops[1].first_error = ZkError::operation_timeout;
    CHECK_THAT(judged(seen, "latency/b").message,
               Contains("(operation_timeout (no reply within two thirds of the session timeout"));
  }
  CHECK(count(judge_sessions(seen, {}), CaseOutcome::failed) == 1);
}

TEST_CASE("smoke judge: cases that did not run are skipped, and without a run path all fail", "[smoke]") {
  auto seen = all_good();
  seen.watch.run.ran = false;
  CHECK(judged(seen, "watch-fires").outcome == CaseOutcome::skipped);
  seen.prepare.error = ZkError::no_auth;
  auto cases = judge_sessions(seen, {});
  REQUIRE(cases.size() == 9);
  for (const auto& one : cases) {
    CHECK(one.outcome == CaseOutcome::failed);
    CHECK_THAT(one.message, Contains("not run: create /zkverify/smoke-h-1-2 via a: no_auth"));
  }
}

TEST_CASE("smoke judge: the ensemble's cases come from the quorum report", "[smoke]") {
  using namespace synthetic;
  EnsembleFacts facts;
  facts.probes = {server("a", Mode::follower, 0x100000001, 1), server("b", Mode::leader, 0x100000001, 2),
                  unreachable("c")};
  facts.write_skipped = true;
  auto cases = judge_ensemble(judge(facts));
  REQUIRE(cases.size() == 6);
  CHECK(find_case(cases, "server-serving/a").outcome == CaseOutcome::passed);
  CHECK(find_case(cases, "server-serving/c").outcome == CaseOutcome::failed);
  CHECK_THAT(find_case(cases, "server-serving/c").message, Contains("unreachable"));
  CHECK(find_case(cases, "single-leader").message == "leader b");
  CHECK(find_case(cases, "quorum").outcome == CaseOutcome::passed);

  facts.probes = {server("a", Mode::follower, 0x100000001, 1), unreachable("b"), unreachable("c")};
  cases = judge_ensemble(judge(facts));
  CHECK(find_case(cases, "single-leader").outcome == CaseOutcome::failed);
  CHECK(find_case(cases, "quorum").outcome == CaseOutcome::failed);
}

TEST_CASE("smoke judge: 2 of 4 voters is no quorum, even when a committed write leaves the count an estimate",
          "[smoke]") {
  using namespace synthetic;
  EnsembleFacts facts;  // no membership: 4 voters estimated from the list; the write still committed
  facts.probes = {server("a", Mode::follower, 0x100000001), server("b", Mode::leader, 0x100000001), unreachable("c"),
                  unreachable("d")};
  facts.round_trip = round_trip(facts.probes, "b", 1);
  auto report = judge(facts);
  REQUIRE(report.voters_uncertain);  // the judge says the estimate is wrong, not "no quorum"
  auto cases = judge_ensemble(report);
  CHECK(find_case(cases, "quorum").outcome == CaseOutcome::failed);  // half of 4 is not a majority
  CHECK_THAT(find_case(cases, "quorum").message, Contains("2/4 voters serving"));
}

TEST_CASE("smoke judge: percentiles by nearest rank, sequence numbers from names", "[smoke]") {
  std::vector<microseconds> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(microseconds(i));
  CHECK(percentile(samples, 50) == microseconds(50));
  CHECK(percentile(samples, 99) == microseconds(99));
  CHECK(percentile({microseconds(7)}, 99) == microseconds(7));
  CHECK(percentile({}, 50) == microseconds(0));
  CHECK(sequence_number("/a/n-0000000012") == 12);
  CHECK_FALSE(sequence_number("/a/n-12"));
  CHECK_FALSE(sequence_number("/a/n-00000000x2"));
}

TEST_CASE("smoke judge: a lone standalone server (a CI container) serves, leads and is its own quorum", "[smoke]") {
  using namespace synthetic;
  EnsembleFacts facts;
  facts.probes = {server("zk", Mode::standalone, 0x100000001)};
  facts.write_skipped = true;
  auto report = judge(facts);
  CHECK(serving_servers(report) == std::vector<std::string>{"zk"});
  CHECK(ready_for_smoke(report));
  for (const auto& one : judge_ensemble(report)) {
    INFO(one.id << ": " << one.message);
    CHECK(one.outcome == CaseOutcome::passed);
  }
  // Among others, a standalone server is not part of the ensemble.
  facts.probes = {server("a", Mode::leader, 0x100000001), server("b", Mode::standalone, 0x100000001)};
  report = judge(facts);
  CHECK(serving_servers(report) == std::vector<std::string>{"a"});
  CHECK_FALSE(ready_for_smoke(report));
  CHECK(find_case(judge_ensemble(report), "server-serving/b").outcome == CaseOutcome::failed);
}

TEST_CASE("smoke judge: with one serving server session-move is skipped, not failed", "[smoke]") {
  auto seen = all_good();
  seen.move = {ran(), "a", "a", {}, {}, {}, ZkError::not_attempted, ZkError::not_attempted};
  auto move = judged(seen, "session-move");
  CHECK(move.outcome == CaseOutcome::skipped);
  CHECK_THAT(move.message, Contains("nowhere to move"));
}
