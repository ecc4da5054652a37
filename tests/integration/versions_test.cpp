// Real servers of every line Debian ships: ZooKeeper 3.4.13 (bullseye's) and 3.9.3 (trixie's),
// fetched by scripts/fetch-zookeeper.sh and started by the lab, give the same verdicts as 3.8.0; and a
// real upgrade, 3.8.0 -> 3.9.3, and its rollback, under roll's watch.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

void every_server_on(const nlohmann::json& report, const std::string& version) {
  for (const auto& server : report["servers"]) {
    INFO(server.dump());
    CHECK(server["version"] == version);
  }
}

// quorum's run on `servers`, after checking its exit code and its JSON verdict.
lab::Run quorum_says(const std::string& servers, int exit_code, const std::string& verdict) {
  auto run = zkverify("quorum --servers " + servers + " --output json --timeout 2s");
  INFO(run.out);
  CHECK(run.exit_code == exit_code);
  CHECK(run.json()["verdict"] == verdict);
  return run;
}

// A zoo.cfg naming the lab's servers as a ConfigMap names pods: the lab's own lines (3.4 reads no
// client part, so they have none) with each server's client port, and `extra` lines after them.
std::string given_list_file(const lab::Lab& ensemble, const std::string& name, const std::string& extra) {
  std::ifstream lines(ensemble.dir() + "/server-lines");
  std::istringstream servers(ensemble.servers());  // pzoo-0=127.0.0.1:PORT,...
  std::string line, server, text = "tickTime=500\n";
  while (std::getline(lines, line) && std::getline(servers, server, ','))
    text += line + ";" + server.substr(server.rfind(':') + 1) + "\n";
  auto path = ensemble.dir() + "/" + name;
  std::ofstream(path) << text << extra;
  return path;
}

// 3.4 reports no list (its conf has no server.N lines): --zoo-cfg gives each server's, and the
// membership checks, safe-to-restart --to and plan work from it (named server.N: the lab's hosts are IPs).
void lists_given_on_34(const lab::Lab& ensemble) {
  auto five = given_list_file(ensemble, "given-5.cfg", "");
  auto six = given_list_file(ensemble, "given-6.cfg", "server.6=127.0.0.6:2888:3888:participant;2181\n");
  auto seven = given_list_file(ensemble, "given-7.cfg",
                               "server.6=127.0.0.6:2888:3888:participant;2181\n"
                               "server.7=127.0.0.7:2888:3888:participant;2181\n");
  auto unknown = zkverify("quorum --output json --servers " + ensemble.servers());
  CHECK(unknown.json()["membership_views"].empty());  // what 3.4 says by itself
  auto given = zkverify("quorum --output json --zoo-cfg " + five);
  INFO(given);
  CHECK(given.exit_code == 0);
  REQUIRE(given.json()["membership_views"].size() == 1);
  CHECK(given.json()["membership_views"][0]["given"].size() == 5);
  CHECK(given.json()["expected_voters"] == 5);
  // The operator says server.4 and server.5 were restarted onto the 7-list: two leaders are possible.
  auto split =
      zkverify("quorum --no-write --zoo-cfg " + five + " --zoo-cfg server.4=" + seven + " --zoo-cfg server.5=" + seven);
  INFO(split);
  CHECK(split.exit_code == 2);
  CHECK_THAT(split.out, Contains("split-brain-possible") && Contains("by --zoo-cfg for server.4, server.5"));
  auto refused = zkverify("safe-to-restart server.1 --zoo-cfg " + five + " --to " + seven);
  INFO(refused);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.out, Contains("server.1 would start again on a list of 7 voters"));
  CHECK(zkverify("safe-to-restart server.1 --zoo-cfg " + five + " --to " + six).exit_code == 0);
  auto plan = zkverify("plan --zoo-cfg " + five + " --to " + six);
  INFO(plan);
  CHECK(plan.exit_code == 0);
  CHECK_THAT(plan.out, Contains("step 1 of 1: add server.6 (id 6)"));
  // step and roll read the same lists: the split given is refused before COMMAND, and a roll onto
  // the 7-list is refused at its first step (nothing restarted: cheap on the suite's time).
  auto step = zkverify("step --zoo-cfg " + five + " --zoo-cfg server.5=" + seven + " --restart server.4 --to " + seven +
                       " -- false");
  INFO(step);
  CHECK(step.exit_code == 1);
  CHECK_THAT(step.out, Contains("split-brain-possible") && Contains("COMMAND not run"));
  auto roll = zkverify("roll --dry-run --output json --zoo-cfg " + five + " --to " + seven + " --state " +
                       ensemble.dir() + "/given-roll.json -- false");
  INFO(roll);
  CHECK(roll.exit_code == 1);
  REQUIRE_FALSE(roll.json()["steps"].empty());
  CHECK(roll.json()["steps"][0]["safe"] == false);
  CHECK_THAT(roll.json()["steps"][0]["safety"].get<std::string>(), Contains("would start again on a list of 7"));
}

// Healthy, then each verdict 3.8.0 gives: quorum, smoke, probe, serve's /readyz, order and
// safe-to-restart; one follower down: degraded and not safe; three down: critical.
void verdicts_on(const std::string& version) {
  auto& ensemble = lab::shared("", "--version " + version);
  auto servers = ensemble.servers();
  auto healthy = zkverify("quorum --servers " + servers + " --output json");
  INFO(version << ": " << healthy.out << healthy.err);
  REQUIRE(healthy.exit_code == 0);
  CHECK(healthy.json()["verdict"] == "healthy");
  CHECK(healthy.json()["round_trip"]["reads_ok"] == 5);
  every_server_on(healthy.json(), version);
  if (version == "3.4.13") lists_given_on_34(ensemble);

  auto smoke = zkverify("smoke --servers " + servers);
  INFO(smoke);
  CHECK(smoke.exit_code == 0);
  CHECK_THAT(smoke.out, Contains("smoke: 21 passed, 0 failed"));

  auto probe = zkverify("probe --servers " + servers + " --local pzoo-0");
  CHECK(probe.exit_code == 0);
  CHECK_THAT(probe.out, Contains("ready: pzoo-0"));
  // serve: /readyz 200 within a few cycles, then SIGTERM.
  auto serve = lab::sh(
      "port=$(perl -MIO::Socket::IP -e 'print IO::Socket::IP->new(Listen => 1, LocalHost => \"127.0.0.1\", "
      "LocalPort => 0)->sockport'); timeout 30 $ZKVERIFY serve --servers " +
      servers +
      " --local pzoo-0 --listen 127.0.0.1:$port --interval 1s --timeout 2s 2>/dev/null & pid=$!; code=; "
      "for i in $(seq 100); do code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "
      "http://127.0.0.1:$port/readyz); [ \"$code\" = 200 ] && break; sleep 0.2; done; kill $pid; wait $pid; "
      "echo $code");
  CHECK_THAT(serve.out, Contains("200"));

  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  auto order = zkverify("order --servers " + servers);
  CHECK(order.exit_code == 0);
  CHECK(order.out.ends_with("\n" + leader + "\n"));  // one name a line, the leader last
  std::vector<std::string> followers;
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"})
    if (name != leader) followers.emplace_back(name);
  auto safe = zkverify("safe-to-restart --servers " + servers + " " + followers[1]);
  INFO(safe);
  // A refusal on a healthy ensemble (seen once in CI, not here): what the check saw right after.
  if (safe.exit_code != 0) UNSCOPED_INFO(zkverify("quorum --servers " + servers + " --output json"));
  CHECK(safe.exit_code == 0);

  // One follower down: degraded; two: still a quorum, but restarting a third would leave none.
  ensemble.act("stop", followers[1]);
  quorum_says(servers, 1, "degraded");
  ensemble.act("stop", followers[2]);
  CHECK(zkverify("quorum --servers " + servers + " --timeout 2s").exit_code == 1);
  auto unsafe = zkverify("safe-to-restart --servers " + servers + " " + followers[3]);
  INFO(unsafe);
  CHECK(unsafe.exit_code == 1);

  ensemble.act("stop", followers[3]);
  CHECK(lab::find_finding(quorum_says(servers, 2, "critical").json(), "no-quorum"));
}

}  // namespace

TEST_CASE("ZooKeeper 3.4.13, real: healthy, smoke, probe, serve, order, safe-to-restart, degraded, critical",
          "[integration][versions][part:versions]") {
  verdicts_on("3.4.13");
}

TEST_CASE("ZooKeeper 3.9.3, real: healthy, smoke, probe, serve, order, safe-to-restart, degraded, critical",
          "[integration][versions][part:versions]") {
  verdicts_on("3.9.3");
}

TEST_CASE("roll through a real upgrade 3.8.0 -> 3.9.3 and its rollback: mixed on the way, nothing lost",
          "[integration][versions][roll][part:roll]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  for (const char* version : {"3.9.3", "3.8.0"}) {
    // One server first, by hand: the ensemble is healthy and says it is mixed.
    lab::sh(std::string(ZKLAB " upgrade ") + ensemble.dir() + " zoo-0 " + version + " && " ZKLAB " wait " +
            ensemble.dir());
    auto mixed = zkverify("quorum --servers " + servers + " --output json");
    INFO(mixed.out);
    CHECK(mixed.exit_code == 0);
    CHECK(lab::find_finding(mixed.json(), "mixed-versions"));
    auto state = ensemble.dir() + "/../roll-to-" + version + ".json";
    auto roll = zkverify("roll --servers " + servers + " --state " + state + " --step-timeout 2m --output json -- " +
                         ZKLAB " upgrade " + ensemble.dir() + " {} " + version);
    INFO("to " << version << ": " << roll.err << roll.out);  // out: the roll's JSON, its steps' findings
    REQUIRE(roll.exit_code == 0);
    const auto& report = roll.json();
    CHECK(report["complete"] == true);
    CHECK(report["watch"]["writes_lost"] == 0);
    CHECK(report["watch"]["sessions_expired"] == 0);
    CHECK(report["watch"]["writes_acked"] > 0);
    WARN("roll to " << version << ": " << report["summary"].get<std::string>());
    CHECK_THAT(report["summary"].get<std::string>(), Contains(std::string("; all 5 on ") + version));
    for (const auto& step : report["steps"]) CHECK(step["version_after"] == version);
    auto after = zkverify("quorum --servers " + servers + " --output json");
    CHECK(after.exit_code == 0);
    CHECK_FALSE(lab::find_finding(after.json(), "mixed-versions"));
    every_server_on(after.json(), version);
  }
}

namespace {
// After 3.4 -> 3.8: healthy, no data loss against the ledger, and the words 3.4 answered and 3.8 refuses
// under its default whitelist are named with the line to add.
void upgraded_from_34_with_nothing_lost(const std::string& servers, const std::string& state) {
  auto done = zkverify("quorum --servers " + servers + " --state " + state + " --output json");
  INFO(done.out);
  CHECK(done.exit_code == 0);
  CHECK_FALSE(lab::find_finding(done.json(), "data-loss"));
  every_server_on(done.json(), "3.8.0");
  REQUIRE(lab::find_finding(done.json(), "not-whitelisted"));
  CHECK_THAT((*lab::find_finding(done.json(), "not-whitelisted"))["message"].get<std::string>(),
             Contains("4lw.commands.whitelist="));
}
}  // namespace

TEST_CASE(
    "3.4.13 -> 3.8.0 with transaction logs and no snapshot (ZOOKEEPER-3056): the roll stops at the first "
    "server that does not come back; with snapshot.trust.empty it completes, nothing lost",
    "[integration][versions][roll][part:versions]") {
  // No whitelist line, as old installs have: 3.4 answers every word, 3.5+ srvr alone.
  auto& ensemble = lab::shared("", "--version 3.4.13 --no-whitelist");
  auto servers = ensemble.servers();
  auto state = ensemble.dir() + "/../ledger-3056.json";
  lab::sh(ZKLAB " drop-snapshots " + ensemble.dir());  // an old install's data directories: logs alone
  REQUIRE(zkverify("quorum --servers " + servers + " --state " + state).exit_code == 0);  // the marker, recorded
  auto roll_to = [&](const std::string& extra) {
    return zkverify("roll --servers " + servers + " --state " + state +
                    " --step-timeout 30s --output json -- " ZKLAB " upgrade " + ensemble.dir() + " {} 3.8.0" + extra);
  };

  auto stopped = roll_to("");
  INFO(stopped);
  CHECK(stopped.exit_code == 1);  // not recovered, while the other four keep the quorum
  const auto& steps = stopped.json()["steps"];
  REQUIRE_FALSE(steps.empty());
  const auto& failed = steps.back();
  auto name = failed["server"].get<std::string>();
  CHECK(name.starts_with("pzoo-"));  // a zoo-* server starts empty (emptyDir) and syncs
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) CHECK(steps[i]["verdict"] == "healthy");
  CHECK_THAT(failed["findings"].dump(), Contains(name + ", last seen on 3.4.13, does not serve since COMMAND"));
  CHECK(stopped.json()["watch"]["writes_lost"] == 0);
  // Nothing after it was touched, and the others serve.
  auto after = zkverify("quorum --servers " + servers + " --output json");
  CHECK(after.exit_code == 1);
  std::size_t on_34 = 0;
  for (const auto& server : after.json()["servers"]) on_34 += server["version"] == "3.4.13";
  CHECK(on_34 == 5 - steps.size());
  auto log =
      lab::sh("grep -c 'No snapshot found, but there are log entries' " + ensemble.dir() + "/" + name + "/server.log");
  CHECK(log.out != "0\n");

  // The procedure that works. The server that did not come back gets snapshot.trust.empty=true (as its
  // pod would, from a fixed ConfigMap, in its next restart): a roll refuses a degraded ensemble.
  lab::sh(ZKLAB " upgrade " + ensemble.dir() + " " + name + " 3.8.0 --trust-empty-snapshot && " ZKLAB " wait " +
          ensemble.dir());
  CHECK(zkverify("quorum --servers " + servers + " --state " + state + " --wait 1m").exit_code == 0);
  // Then the roll with the flag, and a second one without it.
  for (const char* extra : {" --trust-empty-snapshot", ""}) {
    auto roll = roll_to(extra);
    INFO(extra << ": " << roll.out << roll.err);
    CHECK(roll.exit_code == 0);
    CHECK(roll.json()["complete"] == true);
    // The first resumes the round (the servers upgraded before it stopped are skipped); the second restarts all.
    CHECK(roll.json()["done"].size() + roll.json()["skipped"].size() == 5);
    CHECK(roll.json()["watch"]["writes_lost"] == 0);
    CHECK(roll.json()["watch"]["sessions_expired"] == 0);
    WARN("roll to 3.8.0" << extra << ": " << roll.json()["summary"].get<std::string>());
  }
  upgraded_from_34_with_nothing_lost(servers, state);
}
