// The smoke suite's cases on the fake ensemble: healthy, then each case's failure path, and the
// run path removed whatever happened. Verdicts come from the pure judge, as in the command.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>

#include <boost/asio/io_context.hpp>

#include "fake_keeper.hpp"
#include "model/judge/smoke_judge.hpp"
#include "probes/host.hpp"
#include "probes/smoke_cases.hpp"
#include "probes/stop_signals.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using Catch::Matchers::Contains;
using synthetic::find_case;
using zkverify::fake::Ensemble;
using zkverify::fake::Fault;
using zkverify::fake::OpKind;
using zkverify::fake::Rule;
using namespace std::chrono_literals;

namespace {

constexpr auto kRun = "/zkverify/smoke-test-1-2";
// The case deadline of a test that makes one case wait it out: short, yet long enough for every
// other case to pass in a sanitizer build starved beside the integration tests (300 ms was not:
// a fresh-clone run saw ephemeral-cleanup's lookups miss it; 1500 ms was not either: CI saw a
// moved session's reconnect, 50 ms on the fake's thread, still pending 1.4 s later).
constexpr auto kShortCase = 4000ms;

// Three servers; s2 leads (writes go through it).
class SmokeLab {
 public:
  SmokePlan plan(std::chrono::milliseconds case_timeout = 2s) const {
    SmokePlan plan;
    for (int i = 1; i <= 3; ++i)
      plan.servers.push_back({"s" + std::to_string(i), "10.0.0." + std::to_string(i), 2181, {}});
    plan.leader = "s2";
    plan.namespace_path = "/zkverify";
    plan.run_path = kRun;
    plan.ops = 3;
    plan.case_timeout = case_timeout;
    plan.session_timeout = 1000ms;
    return plan;
  }

  std::vector<CaseResult> run(const SmokePlan& plan) {
    seen = run_smoke(plan, ensemble.factory());
    return judge_sessions(seen, {});
  }

  // Only the namespace is left: the run path and everything below it are gone.
  void check_nothing_left() const {
    CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
    CHECK(ensemble.sessions_open() == 0);
  }

  Ensemble ensemble;
  SmokeObservations seen;
};

// Every case but `failing` passed; `failing` failed with a message containing `why`.
void check_only_failure(const std::vector<CaseResult>& cases, const std::string& failing, const std::string& why) {
  for (const auto& one : cases) {
    INFO(one.id << ": " << one.message << "\n" << one.detail);
    CHECK(one.outcome == (one.id == failing ? CaseOutcome::failed : CaseOutcome::passed));
  }
  CHECK_THAT(find_case(cases, failing).message, Contains(why));
}

}  // namespace

TEST_CASE("smoke cases on a healthy fake ensemble all pass and leave nothing behind", "[smoke]") {
  SmokeLab lab;
  auto cases = lab.run(lab.plan());
  std::vector<std::string> ids;
  for (const auto& one : cases) {
    INFO(one.id << ": " << one.message << "\n" << one.detail);
    CHECK(one.outcome == CaseOutcome::passed);
    ids.push_back(one.id);
  }
  CHECK(ids == std::vector<std::string>{"round-trip", "ephemeral-cleanup", "watch-fires", "sequential-order",
                                        "multi-atomic", "cas-version", "session-move", "latency/s1", "latency/s2",
                                        "latency/s3", "cleanup"});
  CHECK(lab.seen.round_trip.writer == "s2");
  CHECK(lab.seen.round_trip.reads.size() == 3);
  CHECK(lab.seen.sequential.creates.size() == 9);
  CHECK(lab.seen.move.from != lab.seen.move.to);
  CHECK(lab.seen.move.id_before == lab.seen.move.id_after);
  for (const auto& latency : lab.seen.latency) {
    REQUIRE(latency.ops.size() == 4);
    for (const auto& op : latency.ops) CHECK(op.samples.size() == 3);
  }
  CHECK(find_case(cases, "latency/s1").properties.size() == 8);  // p50 and p99 of four operations
  lab.check_nothing_left();
}

TEST_CASE("a watch that never fires fails watch-fires, and the rest still runs and is cleaned up", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::watch, Fault::never_complete, 0, ""});
  auto cases = lab.run(lab.plan(kShortCase));
  check_only_failure(cases, "watch-fires", "did not fire within");
  CHECK_FALSE(lab.seen.watch.notice);
  lab.check_nothing_left();
}

TEST_CASE("a stop signal ends the wait for a notice at once, not at the case deadline", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::watch, Fault::never_complete, 0, ""});
  boost::asio::io_context io;
  zkverify::probes::StopSignals signals(io);
  signals.request(SIGTERM);  // stop_requested stays empty: the cases run, their waits see the stop
  auto plan = lab.plan(60s);
  plan.stop_signals = &signals;
  lab.run(plan);
  CHECK_FALSE(lab.seen.watch.notice);
  CHECK(lab.seen.watch.waited < 30s);  // the deadline was 60 s away
  lab.check_nothing_left();
}

TEST_CASE("a stale-version set that is not answered bad_version fails cas-version", "[smoke]") {
  SmokeLab lab;
  // The second set on the node is the stale one: it is lost instead of refused.
  lab.ensemble.inject({"", OpKind::set, Fault::connection_loss, 2, std::string(kRun) + "/cas"});
  auto cases = lab.run(lab.plan());
  check_only_failure(cases, "cas-version", "answered connection_loss, not bad_version");
  lab.check_nothing_left();
}

TEST_CASE("a multi that does not reach the server fails multi-atomic with the reason", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::multi, Fault::connection_loss, 0, ""});
  auto cases = lab.run(lab.plan());
  CHECK(find_case(cases, "multi-atomic").outcome == CaseOutcome::failed);
  CHECK_THAT(find_case(cases, "multi-atomic").message, Contains("connection_loss"));
  lab.check_nothing_left();
}

TEST_CASE("a session that dies when it moves fails session-move", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::move, Fault::session_expired, 0, ""});
  auto cases = lab.run(lab.plan(kShortCase));
  CHECK(find_case(cases, "session-move").outcome == CaseOutcome::failed);
  CHECK(find_case(cases, "round-trip").outcome == CaseOutcome::passed);
  lab.check_nothing_left();
}

TEST_CASE("a session that reconnects elsewhere than where it was moved fails session-move", "[smoke]") {
  SmokeLab lab;
  // The session starts on s1 and is moved to the leader, s2, which refuses it: it lands on s3.
  // The case ends when it lands (no case waits out its deadline here, so a long one costs nothing and
  // a starved machine cannot miss it).
  lab.ensemble.refuse_moves_to("s2");
  auto started = Clock::now();
  auto cases = lab.run(lab.plan(30s));
  CHECK(lab.seen.move.from == "s1");
  CHECK(lab.seen.move.to == "s2");
  CHECK(lab.seen.move.connected_after == "s3");
  check_only_failure(cases, "session-move", "reconnect on s2");
  CHECK(Clock::now() - started < 25s);  // not waited out: it knew once the session landed on s3
  lab.check_nothing_left();
}

TEST_CASE("a close that never completes fails ephemeral-cleanup, not the other cases", "[smoke]") {
  SmokeLab lab;
  // s1 is the ephemeral's creator (the first server that does not lead); the first close on s1 is
  // round-trip's, the second the creator's.
  lab.ensemble.inject({"s1", OpKind::close, Fault::never_complete, 2, ""});
  auto cases = lab.run(lab.plan(kShortCase));
  CHECK(lab.seen.ephemeral.creator == "s1");
  CHECK(find_case(cases, "ephemeral-cleanup").outcome == CaseOutcome::failed);
  CHECK_THAT(find_case(cases, "ephemeral-cleanup").message, Contains("close the creating session"));
  CHECK(find_case(cases, "round-trip").outcome == CaseOutcome::passed);
}

TEST_CASE("an ephemeral the server removes a moment after the close was sent passes ephemeral-cleanup", "[smoke]") {
  SmokeLab lab;
  // zookeeper_close returns once the close request is sent; a server may still hold the node when
  // the first look after sync comes (seen on a real 3.8 ensemble: a false FAIL on a healthy one).
  lab.ensemble.delay_close_effect(150ms);
  auto cases = lab.run(lab.plan());
  INFO(find_case(cases, "ephemeral-cleanup").message);
  CHECK(find_case(cases, "ephemeral-cleanup").outcome == CaseOutcome::passed);
  CHECK(lab.seen.ephemeral.after_close.size() == 3);
}

TEST_CASE("an ephemeral that outlives its session's close until the deadline fails ephemeral-cleanup", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.delay_close_effect(60s);
  auto started = Clock::now();
  auto cases = lab.run(lab.plan(kShortCase));
  const auto& cleanup = find_case(cases, "ephemeral-cleanup");
  CHECK(cleanup.outcome == CaseOutcome::failed);
  CHECK_THAT(cleanup.message, Contains("/ephemeral still exists on s1, s2, s3 after its session (via s1) closed"));
  CHECK(Clock::now() - started < 30s);  // the look-again loop ends by the case deadline
}

TEST_CASE("a case whose operations never complete times out, and the run path is still removed", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::create, Fault::never_complete, 0, std::string(kRun) + "/sequential/"});
  auto cases = lab.run(lab.plan(kShortCase));
  check_only_failure(cases, "sequential-order", "deadline_exceeded");
  CHECK(lab.ensemble.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("a stop request skips the cases after it, and the run path is still removed", "[smoke]") {
  SmokeLab lab;
  auto plan = lab.plan();
  std::atomic<int> asked{0};
  plan.stop_requested = [&] { return ++asked > 2; };  // the first two checks pass: round-trip, ephemeral-cleanup
  auto cases = lab.run(plan);
  CHECK(lab.seen.stopped);
  CHECK(find_case(cases, "round-trip").outcome == CaseOutcome::passed);
  CHECK(find_case(cases, "ephemeral-cleanup").outcome == CaseOutcome::passed);
  CHECK(find_case(cases, "watch-fires").outcome == CaseOutcome::skipped);
  CHECK(find_case(cases, "latency/s3").outcome == CaseOutcome::skipped);
  CHECK(find_case(cases, "cleanup").outcome == CaseOutcome::passed);
  lab.check_nothing_left();
}

TEST_CASE("when the run path cannot be created every session case fails with the reason", "[smoke]") {
  SmokeLab lab;
  lab.ensemble.inject({"", OpKind::create, Fault::connection_loss, 0, kRun});
  auto cases = lab.run(lab.plan());
  REQUIRE(cases.size() == 10);  // seven cases and three latency cases; nothing to clean up
  for (const auto& one : cases) {
    CHECK(one.outcome == CaseOutcome::failed);
    CHECK_THAT(one.message, Contains("not run: create /zkverify/smoke-test-1-2") && Contains("connection_loss"));
  }
}

TEST_CASE("the run path names the host, the process and the time under the namespace", "[smoke]") {
  auto path = smoke_run_path("/zkverify");
  CHECK_THAT(path, Catch::Matchers::StartsWith("/zkverify/smoke-" + local_host_name() + "-"));
  CHECK(std::ranges::count(path, '-') >= 3);
  CHECK_THAT(smoke_run_path("/"), Catch::Matchers::StartsWith("/smoke-"));
}

TEST_CASE("smoke --clients: a case per path, passed when someone is registered there, failed when nobody is",
          "[smoke]") {
  SmokeLab lab;
  auto broker = lab.ensemble.factory().open({{"s1", "10.0.0.1", 2181, {}}}, {});
  REQUIRE(broker->wait_connected(Clock::now() + 1s) == ZkError::ok);
  auto deadline = Clock::now() + 1s;
  for (const auto* path : {"/brokers", "/brokers/ids", "/empty"})
    REQUIRE(create_now(*broker, path, "", CreateMode::persistent, deadline).error == ZkError::ok);
  REQUIRE(create_now(*broker, "/brokers/ids/7", "", CreateMode::ephemeral, deadline).error == ZkError::ok);
  REQUIRE(create_now(*broker, "/controller_epoch", "3", CreateMode::persistent, deadline).error == ZkError::ok);

  auto plan = lab.plan();
  plan.client_paths = {"/brokers/ids", "/controller_epoch", "/empty", "/missing"};
  auto cases = lab.run(plan);
  const auto& ids = find_case(cases, "clients:/brokers/ids");
  CHECK(ids.outcome == CaseOutcome::passed);
  CHECK(ids.message == "1 registered: 7");
  CHECK_THAT(ids.detail, Contains("/brokers/ids/7 session 0x"));
  CHECK(find_case(cases, "clients:/controller_epoch").outcome == CaseOutcome::passed);
  CHECK(find_case(cases, "clients:/controller_epoch").message ==
        "/controller_epoch holds no registration; its data: 3");
  CHECK(find_case(cases, "clients:/empty").outcome == CaseOutcome::failed);
  CHECK(find_case(cases, "clients:/empty").message == "nobody is registered under /empty");
  CHECK(find_case(cases, "clients:/missing").outcome == CaseOutcome::failed);
  CHECK(find_case(cases, "clients:/missing").message == "/missing is not there: no client has registered");
  CHECK(cases.back().id == "cleanup");  // the clients' nodes are not the run's: cleanup leaves them
  CHECK(find_case(cases, "cleanup").outcome == CaseOutcome::passed);
  CHECK(broker->close(Clock::now() + 1s));
}
