// Whole commands, run as main() runs them, against fakes: four-letter-word peers that answer srvr as
// a healthy 5-server ensemble (under a ruok-only whitelist), and the fake keeper for the sessions.
// The failure paths a real ensemble cannot be made to show on demand are tested here.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "command_line_fakes.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace verifier = zkverify::verifier;
using zkverify::fake::Fault;
using zkverify::fake::OpKind;
using zkverify::fake::Rule;

using namespace command_line;

TEST_CASE("command line: quorum on fakes is healthy, and leaves only its namespace behind") {
  FakeEnsemble ensemble;
  auto ran =
      run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json", "--timeout", "2s"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  auto report = ran.json();
  CHECK(report["leader"] == "pzoo-0");
  CHECK(report["round_trip"]["reads_ok"] == 5);
  CHECK(report["servers"][3]["id"] == 4);  // from the session id's top byte
  CHECK(ensemble.zookeeper.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("command line: a connection lost in the middle of one server's read is degraded, naming it") {
  FakeEnsemble ensemble;
  ensemble.zookeeper.inject(Rule{"zoo-1", OpKind::get, Fault::connection_loss, 0, "/zkverify/roundtrip-"});
  auto ran =
      run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json", "--timeout", "2s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);  // the write committed and four of five read it back: zoo-1 is down for its clients
  CHECK(has_finding(ran.json(), "read-back-failed", "zoo-1"));
  CHECK_FALSE(has_finding(ran.json(), "read-back-failed", "zoo-0"));
  CHECK_FALSE(has_finding(ran.json(), "round-trip-failed"));
}

TEST_CASE("command line: an expired writer session fails the round trip, not the process") {
  FakeEnsemble ensemble;
  ensemble.zookeeper.inject(Rule{"pzoo-0", OpKind::create, Fault::session_expired, 0, "/zkverify/roundtrip-"});
  auto ran =
      run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json", "--timeout", "2s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);
  CHECK(has_finding(ran.json(), "round-trip-failed", "pzoo-0"));
}

TEST_CASE("command line: a write that does not commit by the deadline, with a serving quorum, is degraded") {
  FakeEnsemble ensemble;
  ensemble.zookeeper.inject(Rule{"pzoo-0", OpKind::create, Fault::never_complete, 0, "/zkverify/roundtrip-"});
  // The probes get half of --timeout: 1.5 s, which a sanitizer build at nice 19 meets (at 500 ms it
  // took five fakes for unreachable once, in another test).
  auto ran =
      run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json", "--timeout", "3s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);  // not safe to go on, but no evidence of an outage: the quorum serves
  CHECK(has_finding(ran.json(), "write-timed-out", "pzoo-0"));
  CHECK_FALSE(has_finding(ran.json(), "round-trip-failed"));
  CHECK(ran.json()["verdict"] == "degraded");
}

TEST_CASE("command line: the same slow write without a serving quorum stays critical") {
  FakeEnsemble ensemble;
  for (std::size_t follower : {1, 2, 3})
    ensemble.srvr_answers(follower, {::fake::Behaviour::answer, capture("srvr_no_quorum.txt")});
  ensemble.zookeeper.inject(Rule{"pzoo-0", OpKind::create, Fault::never_complete, 0, "/zkverify/roundtrip-"});
  auto ran =
      run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json", "--timeout", "1s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);
  CHECK(has_finding(ran.json(), "no-quorum"));
  CHECK_FALSE(has_finding(ran.json(), "write-timed-out"));
}

TEST_CASE("command line: step does not run COMMAND when its watch cannot start") {
  FakeEnsemble ensemble;
  Witness witness;
  ensemble.zookeeper.inject(Rule{"", OpKind::create, Fault::connection_loss, 0, "/zkverify/watch/"});
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "2s", "--", "touch", witness.path.string()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK_THAT(ran.err, Contains("the watch could not start: cannot create") && Contains("connection_loss") &&
                          Contains("COMMAND not run"));
  CHECK_FALSE(fs::exists(witness.path));
}

TEST_CASE("command line: a session expired while COMMAND runs fails the step, and nothing is left behind") {
  FakeEnsemble ensemble;
  Witness witness, started("started"), expired("expired");
  // Once COMMAND runs (the watch is up), the step's next srvr poll of zoo-0 expires its sessions and
  // lets COMMAND end: on the fake server's thread, as the command's own request drives it.
  ensemble.srvr_chooses(3, [&zookeeper = ensemble.zookeeper, normal = ensemble.normal_srvr(3), started = started.path,
                            expired = expired.path](int) {
    if (fs::exists(started) && !fs::exists(expired)) {
      zookeeper.expire_sessions_on("zoo-0");
      std::ofstream{expired};
    }
    return ::fake::Script{::fake::Behaviour::answer, normal};
  });
  auto command = "touch " + started.path.string() + "; i=0; while [ ! -e " + expired.path.string() +
                 " ] && [ $i -lt 400 ]; do sleep 0.025; i=$((i+1)); done; sleep 0.2; touch " + witness.path.string();
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "10s", "--output", "json", "--", "sh", "-c", command});
  INFO(ran.out << ran.err);
  CHECK(fs::exists(witness.path));
  CHECK(ran.exit_code == 2);
  auto report = ran.json();
  CHECK(has_finding(report, "session-expired"));
  CHECK(report["watch"]["sessions_expired"].get<int>() >= 1);
  CHECK(ensemble.zookeeper.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("command line: concurrent safe-to-restart calls on one ledger approve no more than the quorum allows") {
  FakeEnsemble ensemble;  // five synced voters: two may go at once, a third would leave 2 of 5
  ScratchLedger scratch("concurrent");
  const auto& state = scratch.path;
  const std::vector<std::string> followers{"pzoo-1", "pzoo-2", "zoo-0", "zoo-1"};
  std::vector<Ran> ran(followers.size());
  std::vector<std::thread> callers;
  for (std::size_t i = 0; i < followers.size(); ++i)
    callers.emplace_back([&, i] {
      ran[i] = run(ensemble.zookeeper, {"safe-to-restart", followers[i], "--servers", ensemble.servers(), "--state",
                                        state.string(), "--timeout", "10s"});
    });
  for (auto& caller : callers) caller.join();
  int approved = 0;
  for (const auto& one : ran) {
    INFO(one.out << one.err);
    CHECK((one.exit_code == 0 || one.exit_code == 1));
    if (one.exit_code == 0) ++approved;
    else CHECK_THAT(one.out, Contains("approved to restart, not yet seen back"));
  }
  CHECK(approved == 2);
  auto ledger = nlohmann::json::parse(std::ifstream(state));
  CHECK(ledger["restarts_in_flight"].size() == 2);
}

TEST_CASE("command line: step records its server in the round only after COMMAND exited 0 and it serves") {
  FakeEnsemble ensemble;
  ScratchLedger scratch("step-round");
  const auto& state = scratch.path;
  auto step = [&](const std::string& command) {
    return run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                    "5s", "--state", state.string(), "--", "sh", "-c", command});
  };
  auto failed = step("exit 3");
  INFO(failed.out << failed.err);
  CHECK(failed.exit_code == 1);
  auto ledger = nlohmann::json::parse(std::ifstream(state));
  CHECK(ledger["restarted_this_round"].empty());
  CHECK(ledger["restarts_in_flight"].empty());  // the step is over: its approval too

  // A restart the poller sees: once COMMAND runs, zoo-0 is not serving in two polls in a row (four
  // asks: an empty reply is asked again), then serves.
  Witness started;
  ensemble.srvr_after(
      3, started.path,
      {{4, {::fake::Behaviour::close_at_once, ""}}, {1, {::fake::Behaviour::answer, ensemble.normal_srvr(3)}}});
  auto succeeded = step("touch " + started.path.string() + " && sleep 1");
  INFO(succeeded.out << succeeded.err);
  CHECK(succeeded.exit_code == 0);
  ledger = nlohmann::json::parse(std::ifstream(state));
  CHECK(ledger["restarted_this_round"] == nlohmann::json::array({"zoo-0"}));
  CHECK(ledger["restarts_in_flight"].empty());
}

TEST_CASE("command line: step counts no healthy check before it saw the restart, and says not-restarted") {
  FakeEnsemble ensemble;
  ScratchLedger scratch("step-unseen");
  const auto& state = scratch.path;
  auto step = [&](const std::string& command, const std::string& timeout) {
    return run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                    timeout, "--output", "json", "--state", state.string(), "--", "sh", "-c", command});
  };
  // COMMAND exits 0, but zoo-0 answered srvr throughout with the same counters: no restart happened.
  auto unseen = step("true", "2s");
  INFO(unseen.out << unseen.err);
  CHECK(unseen.exit_code == 1);
  CHECK(has_finding(unseen.json(), "not-restarted", "zoo-0"));
  CHECK_FALSE(has_finding(unseen.json(), "not-recovered"));
  CHECK_THAT(unseen.err, Contains("waiting to see zoo-0 restart"));
  CHECK(nlohmann::json::parse(std::ifstream(state))["restarted_this_round"].empty());

  // A restart between two polls: never seen down, but srvr's Received count starts again from 0 once
  // the poller has seen the old count (three asks after COMMAND ran).
  Witness started;
  auto fresh = ensemble.normal_srvr(3);
  fresh.replace(fresh.find("Received: 4"), 11, "Received: 0");
  ensemble.srvr_after(
      3, started.path,
      {{3, {::fake::Behaviour::answer, ensemble.normal_srvr(3)}}, {1, {::fake::Behaviour::answer, fresh}}});
  auto seen = step("touch " + started.path.string(), "8s");
  INFO(seen.out << seen.err);
  CHECK(seen.exit_code == 0);
  CHECK(nlohmann::json::parse(std::ifstream(state))["restarted_this_round"] == nlohmann::json::array({"zoo-0"}));
}

TEST_CASE("command line: a server seen going down and not back by --step-timeout: step exits 1, not-recovered") {
  FakeEnsemble ensemble;
  Witness started;
  ensemble.srvr_after(3, started.path,
                      {{1, {::fake::Behaviour::close_at_once, ""}}});  // down for good once COMMAND ran
  auto ran =
      run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout", "3s",
                               "--output", "json", "--", "sh", "-c", "touch " + started.path.string() + " && sleep 1"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);  // degraded at the deadline: one of five down
  CHECK(ran.json()["verdict"] == "degraded");
  CHECK(has_finding(ran.json(), "not-recovered", "zoo-0"));
  CHECK_FALSE(has_finding(ran.json(), "not-restarted"));
  CHECK(ran.json()["step"]["command_status"] == 0);
}

TEST_CASE("command line: a COMMAND still running at --step-timeout is terminated and step exits 1 naming it") {
  FakeEnsemble ensemble;
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "1s", "--output", "json", "--", "sh", "-c", "exec sleep 60"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK(has_finding(ran.json(), "command-timed-out", "zoo-0"));
  CHECK(ran.json()["step"]["command_status"] == 128 + 15);
  CHECK_FALSE(has_finding(ran.json(), "not-recovered"));
  CHECK_THAT(ran.err, Contains("COMMAND was still running after 1.0s: terminated"));
  CHECK(ensemble.zookeeper.paths() == std::vector<std::string>{"/zkverify"});
}

namespace {

// `args` end in exit 64 with one line on stderr that says `says`.
void check_usage_error(zkverify::fake::Ensemble& zookeeper, const std::vector<std::string>& args,
                       const std::string& says) {
  auto ran = run(zookeeper, args);
  INFO(ran.err);
  CHECK(ran.exit_code == 64);
  CHECK_THAT(ran.err, Contains(says));
  CHECK(std::ranges::count(ran.err, '\n') == 1);
}

}  // namespace

TEST_CASE("command line: bad input is a usage error naming it, for every command") {
  zkverify::fake::Ensemble zookeeper;
  check_usage_error(zookeeper, {"quorum", "--servers", "a:1", "--stable", "0", "--wait", "1s"},
                    "zkverify quorum: --stable 0: must be at least 1");
  auto ran = run(zookeeper, {"step", "--servers", "a=h:1", "--restart", "b", "--", "true"});
  CHECK(ran.exit_code == 64);
  CHECK(ran.err == "zkverify step: --restart 'b' is not in --servers (names: a)\n");
  check_usage_error(zookeeper, {"quorum", "--servers", "a:1", "--reset-state"}, "--reset-state needs --state FILE");
  // probe and serve without --local, on a host named like none of the servers: 64, naming both.
  for (const char* command : {"probe", "serve"}) {
    auto unnamed = run(zookeeper, {command, "--servers", "not-this-host-a=h:1,not-this-host-b=h:2"});
    INFO(unnamed.err);
    CHECK(unnamed.exit_code == 64);
    CHECK_THAT(unnamed.err, Contains("names: not-this-host-a,not-this-host-b") && Contains("pass --local NAME"));
  }
  check_usage_error(zookeeper, {"serve", "--servers", "a=h:1", "--listen", "9181"}, "--listen '9181'");
  check_usage_error(zookeeper, {"watch", "--servers", "a:1", "--rate", "0"}, "--rate 0: use 1 to 1000 writes a second");
  check_usage_error(zookeeper, {"order", "--servers", "a:1,b:2", "--admin-port", "1,2,3"},
                    "--admin-port takes one port or one per server (2 servers, 3 ports given)");
  CHECK(zookeeper.sessions_opened() == 0);
}

TEST_CASE("command line: smoke on fakes passes on a healthy ensemble, and one failed case makes it exit 1") {
  FakeEnsemble ensemble;
  auto healthy =
      run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--output", "json", "--timeout", "5s"});
  INFO(healthy.out << healthy.err);
  CHECK(healthy.exit_code == 0);
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // zoo-1 down: its server-serving case fails
  auto one_down =
      run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--output", "json", "--timeout", "5s"});
  INFO(one_down.out << one_down.err);
  CHECK(one_down.exit_code == 1);
  bool failed = false;
  auto report = one_down.json();  // a value: iterating over a temporary's member would outlive it
  for (const auto& smoke_case : report["cases"])
    if (smoke_case["id"] == "server-serving/zoo-1") failed = smoke_case["outcome"] == "failed";
  CHECK(failed);
}

TEST_CASE("command line: watch says on stderr when it has started, and ends clean after --duration") {
  FakeEnsemble ensemble;
  auto ran = run(ensemble.zookeeper, {"watch", "--servers", ensemble.servers(), "--duration", "1s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK_THAT(ran.err, Contains("zkverify watch: started: 5 sessions writing under /zkverify\n"));
  CHECK_THAT(ran.out, Contains("summary: sessions 5 kept, 0 expired"));
  CHECK(ensemble.zookeeper.paths() == std::vector<std::string>{"/zkverify"});  // its znodes went with it
}
