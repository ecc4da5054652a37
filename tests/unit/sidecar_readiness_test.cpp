// The sidecar's readiness judgement, its change log, --local's default, and the long-lived local
// session lent to each cycle's round trip (against the fake keeper).

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "fake_keeper.hpp"
#include "fake_peer.hpp"
#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/readiness.hpp"
#include "probes/round_trip.hpp"
#include "synthetic.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"
#include "verifier/commands/local_server.hpp"
#include "verifier/sidecar/cycle.hpp"
#include "verifier/sidecar/session_lender.hpp"
#include "verifier/sidecar/stoppable_factory.hpp"

using namespace zkverify;
using namespace zkverify::verifier;
using Catch::Matchers::Contains;

namespace {

const ReadinessCheck& check_named(const Readiness& readiness, const std::string& name) {
  for (const auto& check : readiness.checks)
    if (check.name == name) return check;
  FAIL("no check named " << name);
  throw std::logic_error("unreachable");
}

const auto kThreeServers = parse_server_list("pzoo-0=127.0.0.1:2181,pzoo-1=127.0.0.1:2182,pzoo-2=127.0.0.1:2183");

// A round trip over kThreeServers written through `writer` (the lenders' local server is pzoo-0).
probes::RoundTripPlan three_server_plan(std::size_t writer) {
  probes::RoundTripPlan plan;
  plan.servers = kThreeServers;
  plan.writer = writer;
  plan.namespace_path = "/zkverify";
  plan.payload = "hello";
  return plan;
}

}  // namespace

TEST_CASE("readiness: a synced follower of a healthy ensemble is ready, proved by the round trip", "[sidecar]") {
  auto report = judge(synthetic::healthy_five());
  auto readiness = judge_readiness(report, "pzoo-0", true);
  CHECK(readiness.ready);
  CHECK(readiness.proof == SyncProof::round_trip);
  REQUIRE(readiness.checks.size() == 3);
  CHECK(readiness.checks[0].name == "serving");
  CHECK(readiness.checks[1].name == "epoch");
  CHECK(readiness.checks[2].name == "synced");
  CHECK(first_failure(readiness).empty());
}

TEST_CASE("readiness: the local server down is not ready, the serving check says why", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.probes[0] = synthetic::unreachable("pzoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto readiness = judge_readiness(judge(facts), "pzoo-0", true);
  CHECK_FALSE(readiness.ready);
  CHECK_FALSE(check_named(readiness, "serving").passed);
  CHECK_THAT(check_named(readiness, "serving").reason, Contains("pzoo-0 is unreachable"));
  CHECK_THAT(first_failure(readiness), Contains("serving: "));
}

TEST_CASE("readiness: another server down leaves the local server ready", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.probes[4] = synthetic::unreachable("zoo-1");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto report = judge(facts);
  CHECK(report.verdict != Verdict::healthy);
  CHECK(judge_readiness(report, "pzoo-0", true).ready);
}

TEST_CASE("readiness: without quorum nobody serves, so nobody is ready", "[sidecar]") {
  EnsembleFacts facts;
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"})
    facts.probes.push_back(synthetic::not_serving(name));
  auto report = judge(facts);
  for (const char* name : {"pzoo-0", "pzoo-1", "zoo-1"}) {
    auto readiness = judge_readiness(report, name, true);
    CHECK_FALSE(readiness.ready);
    CHECK_THAT(check_named(readiness, "serving").reason, Contains("not-serving"));
  }
}

TEST_CASE("readiness: the cycle's write not read back on the local server fails synced", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.round_trip->reads[0].error = ZkError::deadline_exceeded;
  facts.round_trip->reads[0].bytes_match = false;
  auto readiness = judge_readiness(judge(facts), "pzoo-0", true);
  CHECK_FALSE(readiness.ready);
  CHECK(check_named(readiness, "serving").passed);
  CHECK_FALSE(check_named(readiness, "synced").passed);
  CHECK_FALSE(check_named(readiness, "synced").reason.empty());
}

TEST_CASE("readiness: a server on an older epoch fails the epoch check", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.probes[0] = synthetic::server("pzoo-0", Mode::follower, 0x100000005);
  for (std::size_t i = 1; i < facts.probes.size(); ++i) facts.probes[i].srvr->facts.zxid = Zxid{0x200000001};
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 2);
  facts.round_trip->reads[0].error = ZkError::connection_loss;
  facts.round_trip->reads[0].read_mzxid.reset();
  facts.round_trip->reads[0].bytes_match = false;
  auto readiness = judge_readiness(judge(facts), "pzoo-0", true);
  CHECK_FALSE(readiness.ready);
  CHECK_FALSE(check_named(readiness, "epoch").passed);
  CHECK_THAT(check_named(readiness, "epoch").reason, Contains("epoch 0x1"));
}

TEST_CASE("readiness: with --no-write the proof is the leader's synced followers, else srvr's mode", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.round_trip.reset();
  facts.write_skipped = true;
  SECTION("no mntr: srvr's mode alone") {
    auto readiness = judge_readiness(judge(facts), "pzoo-0", false);
    CHECK(readiness.ready);
    CHECK(readiness.proof == SyncProof::srvr_mode);
  }
  SECTION("the leader's mntr counts every follower") {
    MntrFacts mntr;
    mntr.server_state = "leader";
    mntr.synced_followers = 4;
    facts.probes[1].mntr = Reply<MntrFacts>{ProbeError::ok, mntr, {}};
    auto readiness = judge_readiness(judge(facts), "pzoo-0", false);
    CHECK(readiness.ready);
    CHECK(readiness.proof == SyncProof::synced_followers);
    CHECK(to_string(readiness.proof) == "leader's zk_synced_followers");
  }
}

TEST_CASE("readiness: a name not in the report is not ready", "[sidecar]") {
  auto readiness = judge_readiness(judge(synthetic::healthy_five()), "elsewhere", true);
  CHECK_FALSE(readiness.ready);
  CHECK_THAT(first_failure(readiness), Contains("elsewhere is not in the report"));
}

TEST_CASE("readiness changes: one line per change, none when nothing changed", "[sidecar]") {
  auto healthy = judge(synthetic::healthy_five());
  auto ready = judge_readiness(healthy, "pzoo-0", true);
  auto first = describe_changes(nullptr, nullptr, healthy, ready);
  REQUIRE(first.size() == 3);
  CHECK_THAT(first[0], Contains("pzoo-0 ready"));
  CHECK(first[1] == "leader pzoo-1");
  CHECK(first[2] == "verdict healthy");
  CHECK(describe_changes(&healthy, &ready, healthy, ready).empty());

  auto facts = synthetic::healthy_five();
  facts.probes[0] = synthetic::unreachable("pzoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto degraded = judge(facts);
  auto unready = judge_readiness(degraded, "pzoo-0", true);
  auto lines = describe_changes(&healthy, &ready, degraded, unready);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Contains("pzoo-0 not ready: serving: pzoo-0 is unreachable"));
  CHECK_THAT(lines[1], Contains("verdict healthy -> "));

  // A new leader, still healthy and ready: that one line only.
  auto moved = synthetic::healthy_five();
  const std::vector<std::pair<std::string, Mode>> roles{{"pzoo-0", Mode::follower},
                                                        {"pzoo-1", Mode::follower},
                                                        {"pzoo-2", Mode::leader},
                                                        {"zoo-0", Mode::follower},
                                                        {"zoo-1", Mode::follower}};
  for (std::size_t i = 0; i < roles.size(); ++i)
    moved.probes[i] = synthetic::server(roles[i].first, roles[i].second, 0x200000007);
  moved.round_trip = synthetic::round_trip(moved.probes, "pzoo-2", 2);
  auto elected = judge(moved);
  auto still_ready = judge_readiness(elected, "pzoo-0", true);
  REQUIRE(still_ready.ready);
  CHECK(describe_changes(&healthy, &ready, elected, still_ready) ==
        std::vector<std::string>{"leader pzoo-1 -> pzoo-2"});
}

TEST_CASE(
    "the local server (--local): the flag, else the host name, else the only server, else a usage error naming both",
    "[sidecar]") {
  auto servers = parse_server_list("pzoo-0=127.0.0.1:2181,pzoo-1=127.0.0.1:2182");
  CHECK(choose_local(servers, "pzoo-1", "pzoo-0") == "pzoo-1");
  CHECK(choose_local(servers, "", "pzoo-0") == "pzoo-0");
  CHECK(choose_local(parse_server_list("only=127.0.0.1:2181"), "", "laptop") == "only");
  try {
    choose_local(servers, "", "laptop");
    FAIL("no usage error");
  } catch (const Error& error) {
    CHECK(error.code() == make_error_code(Failure::usage));
    CHECK_THAT(error.what(), Contains("'laptop'") && Contains("pzoo-0,pzoo-1"));
  }
  CHECK_THROWS_WITH(choose_local(servers, "zoo-9", "pzoo-0"), Contains("--local 'zoo-9' is not in --servers"));
}

TEST_CASE("the lender keeps one long-lived session on the local server across round trips", "[sidecar]") {
  zkverify::fake::Ensemble ensemble;
  LocalSessionLender lender(ensemble.factory(), kThreeServers[0]);
  auto plan = three_server_plan(1);
  for (int cycle = 0; cycle < 3; ++cycle) {
    plan.deadline = Clock::now() + std::chrono::seconds(5);
    auto trip = probes::run_round_trip(plan, lender);
    REQUIRE(trip.reads.size() == 3);
    for (const auto& read : trip.reads) CHECK(read.bytes_match);
  }
  CHECK(ensemble.sessions_opened() == 1 + 3 * 2);                    // the local one once, the others every cycle
  CHECK(ensemble.sessions_open() == 1);                              // only the local one stays
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});  // nothing left behind

  SECTION("an expired local session is replaced at the next open") {
    ensemble.expire_sessions_on("pzoo-0");
    plan.deadline = Clock::now() + std::chrono::seconds(5);
    auto trip = probes::run_round_trip(plan, lender);
    CHECK(trip.reads[0].bytes_match);
    CHECK(ensemble.sessions_opened() == 1 + 3 * 2 + 3);
  }
  CHECK(lender.close(Clock::now() + std::chrono::seconds(2)));
  CHECK(ensemble.sessions_open() == 0);
}

// The sidecar on the leader's pod writes through its own long-lived session, whose close does not
// end it: the round trip deletes its node then, rather than leave one per cycle.
TEST_CASE("the lent session as the writer: each round trip's node is deleted, not left to the session", "[sidecar]") {
  zkverify::fake::Ensemble ensemble;
  LocalSessionLender lender(ensemble.factory(), kThreeServers[0]);
  auto plan = three_server_plan(0);
  for (int cycle = 0; cycle < 3; ++cycle) {
    plan.deadline = Clock::now() + std::chrono::seconds(5);
    auto trip = probes::run_round_trip(plan, lender);
    CHECK(trip.write_error == ZkError::ok);
    CHECK(trip.removal_error == ZkError::ok);
    CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
  }
  CHECK(ensemble.sessions_open() == 1);  // the lent one, still open
  CHECK(lender.close(Clock::now() + std::chrono::seconds(2)));
}

TEST_CASE("a stop closes every session of the cycle in progress at once: its round-trip node goes with them",
          "[sidecar]") {
  zkverify::fake::Ensemble ensemble;
  ensemble.inject(
      {"pzoo-2", zkverify::fake::OpKind::get, zkverify::fake::Fault::never_complete, 0, ""});  // a read that hangs
  StoppableFactory stoppable(ensemble.factory());
  LocalSessionLender lender(stoppable, kThreeServers[0]);
  auto plan = three_server_plan(1);
  plan.deadline = Clock::now() + std::chrono::seconds(3);
  // The test's stop, once the round trip waits on the read that hangs. What it sees is checked on this
  // thread, after the join (Catch2's assertions are not for other threads).
  struct Seen {
    bool waiting = false, stopped = false;
    std::size_t paths_while_waiting = 0;
    int sessions_after = -1;
    std::vector<std::string> paths_after;
  } seen;
  std::thread stopper([&] {
    seen.waiting =
        ensemble.wait_for_operations(zkverify::fake::OpKind::get, "pzoo-2", 1, Clock::now() + std::chrono::seconds(10));
    seen.paths_while_waiting = ensemble.paths().size();
    seen.stopped = stoppable.stop(Clock::now() + std::chrono::seconds(1));
    seen.sessions_after = ensemble.sessions_open();
    seen.paths_after = ensemble.paths();
  });
  auto trip = probes::run_round_trip(plan, lender);
  stopper.join();
  CHECK(seen.waiting);
  CHECK(seen.paths_while_waiting == 2);  // the namespace and the round trip's node, while it waits
  CHECK(seen.stopped);
  // Right after the stop, not at the round trip's deadline: every session closed, the lent one too,
  // and the node gone with its writer's session.
  CHECK(seen.sessions_after == 0);
  CHECK(seen.paths_after == std::vector<std::string>{"/zkverify"});
  REQUIRE(trip.reads.size() == 3);
  CHECK(trip.reads[0].error == ZkError::ok);

  // After the stop, sessions are closed as they open: a cycle that reaches its round trip late
  // opens nothing that stays open, and writes nothing.
  plan.deadline = Clock::now() + std::chrono::seconds(3);
  auto late = probes::run_round_trip(plan, lender);
  CHECK(late.write_error != ZkError::ok);
  CHECK(ensemble.sessions_open() == 0);
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("readiness with --no-write: the local mntr's zk_peer_state proves sync", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.round_trip.reset();
  facts.write_skipped = true;
  auto report = judge(facts);
  auto synced = judge_readiness(report, "pzoo-0", false, LocalPhase{SyncProof::peer_state, "following - broadcast"});
  CHECK(synced.ready);
  CHECK(synced.proof == SyncProof::peer_state);
  auto syncing =
      judge_readiness(report, "pzoo-0", false, LocalPhase{SyncProof::peer_state, "following - synchronization"});
  CHECK_FALSE(syncing.ready);
  CHECK_THAT(first_failure(syncing), Contains("zk_peer_state is 'following - synchronization'"));
}

// The cycle asks the local server's own mntr for its Zab phase (no admin port here): a phase that
// says it is still syncing keeps it not Ready, though srvr says follower and the leader leads.
TEST_CASE("a --no-write cycle asks the local server's mntr for its sync proof", "[sidecar]") {
  auto syncing = capture("mntr_follower.txt");
  auto phase = syncing.find("following - broadcast");
  REQUIRE(phase != std::string::npos);
  syncing.replace(phase, 21, "following - synchronization");
  std::vector<std::unique_ptr<::fake::Peer>> peers;
  std::string servers;
  for (const auto* name : {"pzoo-0", "pzoo-1", "pzoo-2"}) {
    bool leader = std::string(name) == "pzoo-1";
    std::map<std::string, ::fake::Script> words{
        {"srvr", {::fake::Behaviour::answer, capture(leader ? "srvr_leader.txt" : "srvr_follower.txt")}}};
    if (std::string(name) == "pzoo-0") words["mntr"] = {::fake::Behaviour::answer, syncing};
    peers.push_back(std::make_unique<::fake::Peer>(
        words, ::fake::Script{::fake::Behaviour::answer, capture("mntr_whitelist_ruok_only.txt")}));
    servers += fmt::format("{}{}=127.0.0.1:{}", servers.empty() ? "" : ",", name, peers.back()->port());
  }
  EnsembleOptions options;
  options.servers = parse_server_list(servers);
  options.no_write = true;
  options.verdict_words_only = true;
  options.one_connection_at_a_time = true;
  options.timeout = std::chrono::seconds(5);
  zkverify::fake::Ensemble keepers;
  auto cycle = run_cycle(options, "pzoo-0", test_executor(), keepers.factory(), nullptr);
  CHECK(cycle.readiness.proof == SyncProof::peer_state);
  CHECK_FALSE(cycle.readiness.ready);
  CHECK_THAT(first_failure(cycle.readiness), Contains("zk_peer_state is 'following - synchronization'"));
}

TEST_CASE("parse_peer_state: the value of the zk_peer_state line, if any", "[sidecar]") {
  CHECK(parse_peer_state("zk_version\t3.8.0\nzk_peer_state\tleading - broadcast\nzk_znode_count\t5\n") ==
        "leading - broadcast");
  CHECK(parse_peer_state("zk_peer_state\tfollowing - broadcast\r\n") == "following - broadcast");
  CHECK_FALSE(parse_peer_state("zk_version\t3.8.0\n").has_value());
  CHECK_FALSE(parse_peer_state("xzk_peer_state\tleading - broadcast\n").has_value());
  CHECK_FALSE(parse_peer_state("mntr is not executed because it is not in the whitelist.\n").has_value());
}

TEST_CASE("readiness with --no-write: the AdminServer's zabstate proves sync where mntr is refused", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.round_trip.reset();
  facts.write_skipped = true;
  auto report = judge(facts);
  auto follower = parse_zabstate(capture("admin_zabstate_follower.json"));
  REQUIRE(follower == "broadcast");
  auto synced = judge_readiness(report, "pzoo-0", false, LocalPhase{SyncProof::zabstate, *follower});
  CHECK(synced.ready);
  CHECK(synced.proof == SyncProof::zabstate);
  CHECK(to_string(synced.proof) == "AdminServer's zabstate");
  auto syncing = judge_readiness(report, "pzoo-0", false, LocalPhase{SyncProof::zabstate, "synchronization"});
  CHECK_FALSE(syncing.ready);
  CHECK(first_failure(syncing) == "synced: the AdminServer's zabstate is 'synchronization', not 'broadcast'");
}

TEST_CASE("parse_zabstate: the zabstate of an AdminServer reply, if any", "[sidecar]") {
  CHECK(parse_zabstate(capture("admin_zabstate_leader.json")) == "broadcast");
  CHECK(parse_zabstate(R"({"zabstate" : "election", "command" : "zabstate"})") == "election");
  CHECK_FALSE(parse_zabstate(R"({"zabstate" : null})").has_value());
  CHECK_FALSE(parse_zabstate(R"({"command" : "zabstate", "error" : "Command not found"})").has_value());
  CHECK_FALSE(parse_zabstate("<html><body>HTTP ERROR 500</body></html>").has_value());
  CHECK_FALSE(parse_zabstate("").has_value());
}

TEST_CASE("readiness: right after an election, before the first write, a follower's older epoch is not a lag",
          "[sidecar]") {
  // As captured on a fresh lab: the leader reports the new epoch's first zxid (counter 0), the
  // followers the last epoch's, and every zabstate says "broadcast".
  auto facts = synthetic::healthy_five();
  facts.round_trip.reset();
  facts.write_skipped = true;
  for (auto& probe : facts.probes)
    probe.srvr->facts.zxid = Zxid{probe.srvr->facts.mode == Mode::leader ? 0x200000000u : 0x100000007u};
  auto report = judge(facts);
  auto fresh = judge_readiness(report, "pzoo-0", false, LocalPhase{SyncProof::zabstate, "broadcast"});
  CHECK(check_named(fresh, "epoch").passed);
  CHECK(fresh.ready);
  // Once the new epoch has a transaction, a server still on the old epoch has not applied it.
  for (auto& probe : facts.probes)
    if (probe.srvr->facts.mode == Mode::leader) probe.srvr->facts.zxid = Zxid{0x200000001u};
  auto lagging = judge_readiness(judge(facts), "pzoo-0", false, LocalPhase{SyncProof::zabstate, "broadcast"});
  CHECK_FALSE(check_named(lagging, "epoch").passed);
  CHECK_THAT(check_named(lagging, "epoch").reason, Contains("pzoo-0 is on epoch 0x1, the ensemble on 0x2"));
}
