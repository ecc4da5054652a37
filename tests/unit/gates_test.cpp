// The go/no-go rules of step and roll, whole commands on fakes: a degraded ensemble is refused even
// when the restart itself would be safe, and a roll stops at the first step whose watch saw harm.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "command_line_fakes.hpp"
#include "verifier/check/restart_step.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using namespace command_line;

namespace {

// srvr's answer of a server that just restarted: its usual answer, its Received count from 0.
std::string fresh_srvr(std::string fresh) {
  auto received = fresh.find("Received: ");
  fresh.replace(received, fresh.find('\n', received) - received, "Received: 0");
  return fresh;
}

// Plays the part of a restart, on the fake servers' own threads, advanced by the command's own
// requests (no thread of the test's races it): once COMMAND has touched DIR/NAME, server NAME's next
// four srvr asks find it down (two polls, each asked again: an empty reply may be a limit), then it
// answers with its Received count from 0, and DIR/NAME.back exists. With `expire`, its sessions
// expire as it goes down.
class Restarter {
 public:
  // `names`: the servers as COMMAND names them, when not the ensemble's own (--zoo-cfg's server.N).
  Restarter(FakeEnsemble& ensemble, bool expire, std::vector<std::string> names = {})
      : shared_(std::make_shared<Shared>()) {
    fs::create_directories(shared_->dir);
    if (names.empty()) names = ensemble.names();
    for (std::size_t i = 0; i < ensemble.names().size(); ++i) {
      auto normal = ensemble.normal_srvr(i);
      ensemble.srvr_chooses(
          i, [shared = shared_, &ensemble, expire, i, normal, name = names.at(i), downs = -1](int) mutable {
            if (downs < 0 && fs::remove(shared->dir / name)) {  // COMMAND asked for this restart
              ++shared->restarts;
              if (expire) ensemble.zookeeper.expire_sessions_on(ensemble.names()[i]);
              downs = 0;
            }
            if (downs < 0) return ::fake::Script{::fake::Behaviour::answer, normal};
            if (++downs == 4) {
              downs = -1;
              normal = fresh_srvr(normal);
              std::ofstream{shared->dir / (name + ".back")};
            }
            return ::fake::Script{::fake::Behaviour::close_at_once, ""};
          });
    }
  }
  ~Restarter() { fs::remove_all(shared_->dir); }
  Restarter(const Restarter&) = delete;
  Restarter& operator=(const Restarter&) = delete;
  std::string command() const { return "touch " + (shared_->dir / "{}").string(); }
  // COMMAND for one server that returns once its restart is over (as kubectl delete pod --wait does).
  std::string command_waiting(const std::string& name) const {
    auto back = (shared_->dir / (name + ".back")).string();
    return "touch " + (shared_->dir / name).string() + "; i=0; while [ ! -e " + back +
           " ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; sleep 0.3";
  }
  int restarts() const { return shared_->restarts; }

 private:
  struct Shared {  // the choosers' too: they may outlive the Restarter on the peers' threads
    fs::path dir = fs::temp_directory_path() / ("zkverify-restarts-" + std::to_string(::getpid()));
    std::atomic<int> restarts{0};
  };
  std::shared_ptr<Shared> shared_;
};

const std::vector<std::string> kListed{"server.1", "server.2", "server.3", "server.4", "server.5"};

}  // namespace

TEST_CASE("step reads the lists --zoo-cfg gives: a server already on a list that could split, refused") {
  FakeEnsemble ensemble;
  ListFiles lists(ensemble, "gates-lists");
  Witness witness;
  // server.5 is back on the 7-list: {1,2,3} of the 5-list and {4,5,6,7} of the 7-list could each
  // elect a leader, so nothing is restarted.
  auto ran = run(ensemble.zookeeper,
                 {"step", "--zoo-cfg", lists.five, "--zoo-cfg", "server.5=" + lists.seven, "--restart", "server.4",
                  "--to", lists.seven, "--step-timeout", "5s", "--", "touch", witness.path.string()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK_THAT(ran.out, Contains("split-brain-possible") && Contains("by --zoo-cfg for server.5") &&
                          Contains("step server.4: the ensemble is critical before the step; COMMAND not run"));
  CHECK_FALSE(fs::exists(witness.path));
}

TEST_CASE("step --zoo-cfg --to: once restarted, the server holds --to's list in the checks after it") {
  FakeEnsemble ensemble;
  ListFiles lists(ensemble, "gates-lists");
  Restarter restarter(ensemble, false, kListed);
  auto ran = run(ensemble.zookeeper,
                 {"step", "--zoo-cfg", lists.five, "--restart", "server.4", "--to", lists.six, "--step-timeout", "10s",
                  "--output", "json", "--", "sh", "-c", restarter.command_waiting("server.4")});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);  // 5 and 6 voters: their majorities always meet, a change in progress
  CHECK(restarter.restarts() == 1);
  auto views = ran.json()["membership_views"];
  REQUIRE(views.size() == 2);
  for (const auto& view : views)
    CHECK((view["voters"].size() == 6) == (view["holders"] == nlohmann::json::array({"server.4"})));
}

TEST_CASE(
    "roll --zoo-cfg --to: each server restarted holds --to's list, so the new leader's is judged after the last") {
  FakeEnsemble ensemble;
  ListFiles lists(ensemble, "gates-lists");
  ScratchLedger ledger("roll-given-lists");
  Restarter restarter(ensemble, false, kListed);
  // All five onto a 6-list whose id 6 nobody started: every step is safe (5 and 6 voters: majorities
  // meet), and once the leader went last, the new leader holds the 6-list, which names a server that
  // is not listed. Were the restarted servers still taken to hold the 5-list, that would go unseen.
  auto ran =
      run(ensemble.zookeeper, {"roll", "--zoo-cfg", lists.five, "--to", lists.six, "--state", ledger.path.string(),
                               "--step-timeout", "10s", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  auto record = ran.json();
  REQUIRE(record["steps"].size() == 5);
  CHECK(restarter.restarts() == 5);
  for (std::size_t i = 0; i < 4; ++i) CHECK(record["steps"][i]["verdict"] == "healthy");
  const auto& last = record["steps"][4];
  CHECK(last["server"] == "server.1");  // the leader, last
  CHECK(last["verdict"] == "degraded");
  CHECK(std::ranges::any_of(last["check_findings"], [](const nlohmann::json& finding) {
    return finding["code"] == "membership-unlisted" &&
           finding["message"].get<std::string>().find("ids not listed: 6") != std::string::npos;
  }));
}

TEST_CASE("step refuses a degraded ensemble even when its own restart would be safe: COMMAND not run") {
  FakeEnsemble ensemble;
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // zoo-1 down: 4 of 5, a quorum still
  Witness witness;
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "3s", "--", "touch", witness.path.string()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK_THAT(ran.out, Contains("step zoo-0: the ensemble is degraded before the step; COMMAND not run"));
  CHECK_FALSE(fs::exists(witness.path));
}

TEST_CASE("roll refuses a degraded ensemble before its first step, and says so in its JSON") {
  FakeEnsemble ensemble;
  ScratchLedger ledger("roll-refused");
  Restarter restarter(ensemble, false);
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // after the restarter's script: it wins
  auto ran =
      run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", ledger.path.string(),
                               "--step-timeout", "5s", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  auto record = ran.json();
  CHECK(record["steps"].empty());
  CHECK(record["complete"] == false);
  REQUIRE(record["refused"].is_object());
  CHECK(record["refused"]["reason"] == "the ensemble is degraded");
  CHECK(restarter.restarts() == 0);
}

TEST_CASE("roll restarts every server, the leader last, --pause between steps, when each step is clean") {
  FakeEnsemble ensemble;
  ScratchLedger ledger("roll-clean");
  Restarter restarter(ensemble, false);
  auto ran = run(ensemble.zookeeper,
                 {"roll", "--servers", ensemble.servers(), "--state", ledger.path.string(), "--step-timeout", "10s",
                  "--pause", "300ms", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  auto record = ran.json();
  CHECK(record["complete"] == true);
  REQUIRE(record["steps"].size() == 5);
  CHECK(record["steps"][4]["server"] == "pzoo-0");          // the leader
  for (std::size_t i = 1; i < record["steps"].size(); ++i)  // at least the pause between one step's end and the next
    CHECK(record["steps"][i]["started_ms"].get<long>() - record["steps"][i - 1]["ended_ms"].get<long>() >= 300);
  CHECK(record["watch"]["sessions_expired"] == 0);
  CHECK(restarter.restarts() == 5);
}

TEST_CASE("roll with an even majority: 4 voters and 2 observers roll through, observers first, the leader last") {
  FakeEnsemble ensemble({"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2"}, {4, 5});
  ScratchLedger ledger("roll-even");
  Restarter restarter(ensemble, false);
  auto ran =
      run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", ledger.path.string(),
                               "--step-timeout", "10s", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  auto record = ran.json();
  CHECK(record["complete"] == true);
  REQUIRE(record["steps"].size() == 6);  // each voter's restart leaves 3 of 4: a quorum
  CHECK(record["steps"][0]["server"] == "zoo-1");
  CHECK(record["steps"][1]["server"] == "zoo-2");
  CHECK(record["steps"][5]["server"] == "pzoo-0");
  CHECK(restarter.restarts() == 6);
}

TEST_CASE("two voters: step and roll restart neither, the ensemble healthy, since one of two is no quorum") {
  FakeEnsemble ensemble({"zoo-0", "zoo-1"});
  Witness witness;
  auto step = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-1", "--step-timeout",
                                       "3s", "--", "touch", witness.path.string()});
  INFO(step.out << step.err);
  CHECK(step.exit_code == 1);
  CHECK_THAT(step.out, Contains("healthy") &&
                           Contains("step zoo-1: not safe to restart: 0 of 2 voters down or not proven synced: "
                                    "restarting zoo-1 would leave 1 synced; a quorum needs 2; COMMAND not run"));
  CHECK_FALSE(fs::exists(witness.path));

  ScratchLedger ledger("roll-two");
  Restarter restarter(ensemble, false);
  auto roll =
      run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", ledger.path.string(),
                               "--step-timeout", "5s", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(roll.out << roll.err);
  CHECK(roll.exit_code == 1);
  REQUIRE(roll.json()["refused"].is_object());
  CHECK_THAT(roll.json()["refused"]["reason"].get<std::string>(),
             Contains("not safe to restart") && Contains("a quorum needs 2"));
  CHECK(restarter.restarts() == 0);
}

TEST_CASE("roll stops after the first step whose watch saw sessions expire: exit 2, nothing more restarted") {
  FakeEnsemble ensemble;
  ScratchLedger ledger("roll-expired");
  Restarter restarter(ensemble, true);
  auto ran =
      run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", ledger.path.string(),
                               "--step-timeout", "10s", "--output", "json", "--", "sh", "-c", restarter.command()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);
  auto record = ran.json();
  CHECK(record["verdict"] == "critical");
  CHECK(record["complete"] == false);
  CHECK(record["steps"].size() == 1);
  CHECK(record["remaining"].size() == 4);
  CHECK(record["watch"]["sessions_expired"].get<int>() >= 1);
  CHECK(restarter.restarts() == 1);
}

TEST_CASE("quorum --wait --stable counts healthy attempts in a row: a degraded one starts the count again") {
  FakeEnsemble ensemble;
  // zoo-1 is down for the third attempt only: its srvr, and the second try (an empty reply may be a limit).
  ::fake::Script up{::fake::Behaviour::answer, capture("srvr_follower.txt")};
  ::fake::Script down{::fake::Behaviour::close_at_once, ""};
  ensemble.srvr_sequence(4, {up, up, down, down, up});
  auto ran = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--wait", "30s", "--interval", "100ms",
                                      "--stable", "3", "--timeout", "2s"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK_THAT(ran.err, Contains("attempt 2: healthy, healthy 2/3 in a row"));
  CHECK_THAT(ran.err, Contains("attempt 3: degraded"));
  CHECK_THAT(ran.err, Contains("attempt 4: healthy, healthy 1/3 in a row"));
  CHECK_THAT(ran.err, Contains("attempt 6: healthy, healthy 3/3 in a row"));
}

TEST_CASE("step's --stable counts healthy checks in a row: a failed check between them starts the count again") {
  FakeEnsemble ensemble;
  Restarter restarter(ensemble, false);
  // Round trips: the check before the step, then the recovery checks; from the third recovery check
  // on, every other one fails. Two in a row at most: never three, so zoo-0 never counts as recovered.
  for (int nth = 4; nth <= 20; nth += 2)
    ensemble.zookeeper.inject(zkverify::fake::Rule{
        "", zkverify::fake::OpKind::create, zkverify::fake::Fault::connection_loss, nth, "/zkverify/roundtrip-"});
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "7s", "--output", "json", "--", "sh", "-c", restarter.command_waiting("zoo-0")});
  INFO(ran.out << ran.err);
  CHECK((ran.exit_code == 1 || ran.exit_code == 2));
  CHECK(has_finding(ran.json(), "not-recovered", "zoo-0"));
  CHECK_FALSE(has_finding(ran.json(), "not-restarted"));
  CHECK(restarter.restarts() == 1);
}

TEST_CASE("step counts no healthy check before it saw the restart: a slow restart after three healthy checks") {
  FakeEnsemble ensemble;
  Witness started("started");
  auto round_trips = [&] { return ensemble.zookeeper.operations(zkverify::fake::OpKind::create, "pzoo-0"); };
  // The old process answers three recovery checks, then zoo-0 restarts: decided on zoo-0's own
  // thread at each srvr, from the round trips the command made.
  ensemble.srvr_chooses(3, [&, before = -1, downs = 0](int) mutable {
    if (before < 0 && fs::exists(started.path)) before = round_trips();
    if (before < 0 || round_trips() < before + 3)
      return ::fake::Script{::fake::Behaviour::answer, capture("srvr_follower.txt")};
    if (++downs <= 4) return ::fake::Script{::fake::Behaviour::close_at_once, ""};
    return ::fake::Script{::fake::Behaviour::answer, fresh_srvr(ensemble.normal_srvr(3))};
  });
  auto ran = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                      "20s", "--output", "json", "--", "touch", started.path.string()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK_FALSE(has_finding(ran.json(), "not-restarted"));
  CHECK(ran.json()["step"]["downtime_ms"].is_number());
}

TEST_CASE("step: a signal during the wait after COMMAND ends the wait after the check under way, approval withdrawn") {
  zkverify::probes::Executor executor;  // a stop stays: this test's own, outliving the fakes below
  FakeEnsemble ensemble;
  ScratchLedger ledger("step-signalled");
  Witness started("signalled");
  // Once COMMAND ran and the wait polled zoo-0 five times, a SIGTERM, as kubectl's would come:
  // requested on zoo-0's own thread, at its fifth srvr since.
  ensemble.srvr_chooses(3, [&, asks = 0](int) mutable {
    if (fs::exists(started.path) && ++asks == 5) executor.stop().request(SIGTERM);
    return ::fake::Script{::fake::Behaviour::answer, capture("srvr_follower.txt")};
  });
  auto began = std::chrono::steady_clock::now();
  // zoo-0 never restarts: without the signal the wait would last the whole --step-timeout.
  auto ran = run_on(executor, ensemble.zookeeper,
                    {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout", "60s", "--state",
                     ledger.path.string(), "--output", "json", "--", "touch", started.path.string()});
  auto took = std::chrono::steady_clock::now() - began;
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK(ran.json()["verdict"] == "degraded");
  CHECK(has_finding(ran.json(), "interrupted", "zoo-0"));
  CHECK_FALSE(has_finding(ran.json(), "not-restarted"));  // it did not wait to find out
  CHECK(took < std::chrono::seconds(30));                 // the signal ended the wait, not --step-timeout
  auto record = nlohmann::json::parse(std::ifstream(ledger.path));
  CHECK(record["restarts_in_flight"].empty());
  CHECK(record["restarted_this_round"].empty());
}

// What the watch saw of the registrations, as a step's findings take it: only the absences that
// overlap the step (a roll's one watch saw the earlier steps' too).
TEST_CASE("a step takes the absences its watch saw that overlap it, and no other") {
  using zkverify::verifier::StepRun;
  auto at = [](int seconds) {
    auto offset = std::chrono::seconds(seconds);
    return zkverify::Moment{zkverify::Clock::time_point{} + offset, std::chrono::system_clock::time_point{} + offset};
  };
  auto absence = [&](const char* path, int gone, std::optional<int> back) {
    zkverify::RegistrationAbsence seen{path, 0x1, at(gone - 1), at(gone), std::nullopt, 0};
    if (back) seen.back = at(*back);
    return seen;
  };
  StepRun run;
  run.started = at(100).steady;
  run.ended = at(200).steady;
  auto seen = zkverify::verifier::seen_during({absence("/a", 10, 20),     // over before the step
                                               absence("/b", 90, 110),    // went before, back during it
                                               absence("/c", 150, 160),   // within it
                                               absence("/d", 190, {}),    // went during it, still gone
                                               absence("/e", 250, 260)},  // after it
                                              run);
  std::vector<std::string> paths;
  for (const auto& one : seen) paths.push_back(one.path);
  CHECK(paths == std::vector<std::string>{"/b", "/c", "/d"});
}
