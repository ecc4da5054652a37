// The Kubernetes-shaped lab (issue 43, tests/lab/zkpods): servers reached by name, each pod on an
// address of its own that changes when it restarts, names that stop resolving, partitions. zkverify
// runs inside the lab's network namespace, as it would in a pod of the cluster.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;

namespace {

class PodLab {
 public:
  PodLab() : dir_(std::filesystem::temp_directory_path() / ("zkpods-" + std::to_string(::getpid()))) {
    auto up = lab::sh(std::string(ZKPODS) + " up " + dir_.string());
    if (up.exit_code != 0) {
      lab::sh(std::string(ZKPODS) + " down " + dir_.string());
      std::filesystem::remove_all(dir_);
      throw std::runtime_error("zkpods up failed: " + up.err);
    }
  }
  ~PodLab() {
    auto down = std::string(ZKPODS) + " down " + dir_.string() + " >/dev/null 2>&1";
    if (std::system(down.c_str()) != 0) std::fprintf(stderr, "zkpods down %s failed\n", dir_.c_str());
    std::filesystem::remove_all(dir_);
  }
  PodLab(const PodLab&) = delete;
  PodLab& operator=(const PodLab&) = delete;

  // zkpods VERB DIR ARGS, which must succeed; what it printed.
  std::string pods(const std::string& verb, const std::string& args = "") const {
    auto run = lab::sh(std::string(ZKPODS) + " " + verb + " " + dir_.string() + " " + args);
    INFO("zkpods " << verb << " " << args << ": " << run.err);
    REQUIRE(run.exit_code == 0);
    while (!run.out.empty() && run.out.back() == '\n') run.out.pop_back();
    return run.out;
  }
  // zkverify ARGS inside the lab's namespace.
  lab::Run zkverify(const std::string& args) const {
    return lab::sh(std::string(ZKPODS) + " exec " + dir_.string() + " \"$ZKVERIFY\" " + args);
  }
  // A shell command line inside the namespace ("$ZKVERIFY" is the binary, "$PODS" this lab's zkpods).
  lab::Run sh(const std::string& command) const {
    return lab::sh("export ZKVERIFY PODS='" + std::string(ZKPODS) + "' DIR=" + dir_.string() + "; " +
                   std::string(ZKPODS) + " exec " + dir_.string() + " bash -c '" + command + "'");
  }
  std::string servers() const { return pods("servers"); }
  const std::filesystem::path& dir() const { return dir_; }
  std::string restart_command() const { return std::string(ZKPODS) + " restart " + dir_.string() + " {}"; }

 private:
  std::filesystem::path dir_;
};

std::unique_ptr<PodLab>& pods_slot() {
  static std::unique_ptr<PodLab> lab;
  return lab;
}

// One lab for the part's cases, reset (healed, names published, servers started) before each.
PodLab& shared_pods() {
  auto& lab = pods_slot();
  if (!lab) lab = std::make_unique<PodLab>();
  else lab->pods("reset");
  return *lab;
}

// The shared lab goes when the run ends (the test process leaves by _Exit: no static destructors).
struct SharedPodsDown : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats& stats) override {
    pods_slot().reset();
    TestEventListenerBase::testRunEnded(stats);
  }
};
CATCH_REGISTER_LISTENER(SharedPodsDown)

std::string follower_of(const PodLab& pods) {
  auto leader = pods.pods("leader");
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"})
    if (name != leader) return name;
  return "";
}

const nlohmann::json& server_in(const nlohmann::json& report, const std::string& name) {
  for (const auto& server : report["servers"])
    if (server["name"] == name) return server;
  throw std::runtime_error("no server " + name + " in the report");
}

// One shell inside the lab: a watch and a sidecar beside pod `local`, which stops and whose name
// stops resolving (the sidecar says not Ready; quorum's report in DIR/down.json), then comes back on
// a new address while `quorum --wait` waits. What each said, one line each, and the watch's JSON
// lines in DIR/watch.json. Every child has a timeout.
std::string follow_a_pod_to_its_new_address(const PodLab& pods, const std::string& local) {
  std::string script = R"sh(S=SERVERS; L=LOCAL; cd "$DIR"
ready() { [ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 2 http://127.0.0.1:9180/readyz)" = 200 ]; }
cycles() { curl -s --max-time 2 http://127.0.0.1:9180/metrics | awk "/^zkverify_cycles_total / {print \$2}"; }
until_ready() { for i in $(seq 60); do ready && return 0; sleep 0.5; done; return 1; }
timeout 150 "$ZKVERIFY" watch --servers "$S" --output json >watch.json 2>watch.err & w=$!
timeout 150 "$ZKVERIFY" serve --servers "$S" --local $L --listen 127.0.0.1:9180 --interval 1s --timeout 2s >serve.log 2>&1 & s=$!
until_ready && echo "ready before" || echo "not ready before"
"$PODS" stop "$DIR" $L; "$PODS" unpublish "$DIR" $L; c=$(cycles); for i in $(seq 20); do [ "$(cycles)" -ge $((c + 2)) ] && break; sleep 0.5; done
ready && echo "ready while down" || echo "not ready while down"
"$ZKVERIFY" quorum --output json --servers "$S" >down.json; echo "down exit $?"
timeout 100 "$ZKVERIFY" quorum --wait 60s --servers "$S" >gate.out 2>&1 & g=$!
sleep 2; "$PODS" restart "$DIR" $L
wait $g; echo "gate exit $?"
until_ready && echo "ready again" || echo "not ready again"
for i in $(seq 20); do grep -q "\"back on its own server" watch.json && break; sleep 0.5; done
kill -TERM $s; wait $s; echo "serve exit $?"
kill -INT $w; wait $w; echo "watch exit $?")sh";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"SERVERS", pods.servers()}, {"LOCAL", local}})
    script.replace(script.find(from), from.size(), to);
  auto run = pods.sh(script);
  INFO(run);
  REQUIRE(run.exit_code == 0);
  return run.out;
}

}  // namespace

TEST_CASE(
    "pods: by name, and a pod down with its name unpublished, then back on a new address: the gate says why and "
    "waits, the sidecar follows it, the watch keeps its sessions",
    "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  CHECK_THAT(pods.servers(), Contains("pzoo-0=pzoo-0.pzoo:2181"));  // names, as a ConfigMap lists them
  auto healthy = pods.zkverify("quorum --output json --servers " + pods.servers());
  INFO(healthy);
  CHECK(healthy.exit_code == 0);
  auto local = follower_of(pods);
  auto before = pods.pods("address", local);
  auto said = follow_a_pod_to_its_new_address(pods, local);
  INFO(said);
  CHECK(pods.pods("address", local) != before);
  CHECK_THAT(said, Contains("ready before\n") && Contains("not ready while down\n") && Contains("ready again\n"));
  CHECK_THAT(said, Contains("gate exit 0\n") && Contains("serve exit 0\n") && Contains("watch exit 0\n"));
  // Down and its name unpublished: degraded (four of five serve), the lookup's own words, not a
  // usage error.
  CHECK_THAT(said, Contains("down exit 1\n"));
  std::ifstream down_file(pods.dir() / "down.json");
  auto down = nlohmann::json::parse(down_file, nullptr, false);
  INFO(down);
  REQUIRE_FALSE(down.is_discarded());
  CHECK_THAT(server_in(down, local).dump(), Contains("lookup of"));
  std::ifstream in(pods.dir() / "watch.json");
  nlohmann::json summary;
  bool home_again = false;  // the session that failed over went back to its pod on its new address
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    summary = nlohmann::json::parse(line);
    home_again =
        home_again || (summary["event"] == "reconnected" && summary["session"] == local && summary["server"] == local &&
                       summary["detail"].get<std::string>().starts_with("back on its own server"));
  }
  INFO(summary);
  CHECK(home_again);
  CHECK(summary["event"] == "summary");
  CHECK(summary["sessions_expired"] == 0);
  CHECK(summary["writes_lost"] == 0);
}

TEST_CASE("pods: a roll of all five, each back on a new address: no session expired, no write lost",
          "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto state = std::filesystem::temp_directory_path() / ("pods-roll-" + std::to_string(::getpid()) + ".json");
  auto roll = pods.zkverify("roll --output json --step-timeout 90s --servers " + pods.servers() + " --state " +
                            state.string() + " -- " + pods.restart_command());
  INFO(roll);
  REQUIRE(roll.exit_code == 0);
  const auto& report = roll.json();
  CHECK(report["complete"] == true);
  CHECK(report["steps"].size() == 5);
  CHECK(report["watch"]["sessions_expired"] == 0);
  CHECK(report["watch"]["writes_lost"] == 0);
  WARN("a roll with new addresses: " << report["summary"].get<std::string>());
  std::filesystem::remove(state);
  std::filesystem::remove(state.string() + ".lock");
}

TEST_CASE("pods: a follower partitioned from the leader is degraded and named, before and after ZooKeeper notices",
          "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto servers = pods.servers();
  auto leader = pods.pods("leader");
  auto follower = follower_of(pods);
  pods.pods("partition", follower + " -- " + leader);

  // At once: it still says follower (its leader has not timed out), but cannot sync.
  auto at_once = pods.zkverify("quorum --output json --servers " + servers);
  INFO(at_once);
  CHECK(at_once.exit_code == 1);
  REQUIRE(lab::find_finding(at_once.json(), "read-back-failed"));
  CHECK((*lab::find_finding(at_once.json(), "read-back-failed"))["server"] == follower);
  CHECK_FALSE(lab::find_finding(at_once.json(), "round-trip-failed"));

  // Once it gave its leader up (tickTime x syncLimit: 5 s here), it serves no more.
  lab::Run later;
  for (int attempt = 0; attempt < 30; ++attempt) {
    later = pods.zkverify("quorum --output json --servers " + servers);
    if (server_in(later.json(), follower)["mode"] != "follower") break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  INFO(later);
  CHECK(later.exit_code == 1);
  CHECK(server_in(later.json(), follower)["mode"] != "follower");
  CHECK(later.json()["leader"] == leader);
  CHECK_FALSE(lab::find_finding(later.json(), "round-trip-failed"));
}

TEST_CASE("pods: zkverify cut off from a server the ensemble still has: unreachable, and the leader's count said",
          "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto servers = pods.servers();
  auto follower = follower_of(pods);
  pods.pods("isolate-client", follower);
  auto cut = pods.zkverify("quorum --output json --servers " + servers);
  INFO(cut);
  CHECK(cut.exit_code == 1);
  REQUIRE(lab::find_finding(cut.json(), "unreachable"));
  CHECK((*lab::find_finding(cut.json(), "unreachable"))["server"] == follower);
  CHECK_THAT((*lab::find_finding(cut.json(), "unreachable"))["message"].get<std::string>(),
             Contains("the leader still counts every other voter synced"));
  CHECK(cut.json()["round_trip"]["reads_ok"] == 4);
}

namespace {

// One poll of the gate while the leader is cut off: what it said, in a line of the timeline.
struct Moment {
  double at = 0;
  int exit_code = 0;
  nlohmann::json report;
  std::string line() const {
    std::string codes;
    for (const auto& finding : report["findings"])
      codes += " " + finding["code"].get<std::string>() + "(" + finding["severity"].get<std::string>() + ")";
    return fmt::format("{:5.1f}s exit {} leader {}:{}", at, exit_code, report["leader"].dump(), codes);
  }
};

// The gate every half second until the servers other than `old_leader` serve a leader of their own
// and `old_leader` no longer says leader, or 60 s.
std::vector<Moment> gate_until_reelected(const PodLab& pods, const std::string& old_leader) {
  std::vector<Moment> moments;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto run = pods.zkverify("quorum --output json --timeout 3s --servers " + pods.servers());
    std::chrono::duration<double> at = std::chrono::steady_clock::now() - start;
    moments.push_back({at.count(), run.exit_code, run.json()});
    const auto& report = moments.back().report;
    bool moved = report["leader"].is_string() && report["leader"] != old_leader;
    if ((moved && server_in(report, old_leader)["mode"] != "leader") || at.count() > 60) return moments;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

TEST_CASE(
    "pods: the leader partitioned from the majority: never passes, critical only while no leader can commit, "
    "then degraded naming the old leader",
    "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto old_leader = pods.pods("leader");
  std::string others;
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"})
    if (name != old_leader) others += std::string(others.empty() ? "" : ",") + name;
  pods.pods("partition", old_leader + " -- " + others);
  auto moments = gate_until_reelected(pods, old_leader);
  std::string timeline;
  for (const auto& moment : moments) timeline += moment.line() + "\n";
  INFO(timeline);
  WARN("the leader " << old_leader << " partitioned from the majority, the gate every half second:\n" << timeline);
  for (const auto& moment : moments) {
    CHECK(moment.exit_code != 0);  // the gate never passes while a server is cut off
    // Critical only for what a client sees: two servers saying leader, or writes not committed.
    if (moment.exit_code == 2)
      CHECK((lab::find_finding(moment.report, "multiple-leaders") ||
             lab::find_finding(moment.report, "round-trip-failed") || lab::find_finding(moment.report, "no-quorum") ||
             lab::find_finding(moment.report, "no-leader")));
  }
  const auto& last = moments.back();
  REQUIRE(last.report["leader"].is_string());
  CHECK(last.report["leader"] != old_leader);
  CHECK(last.exit_code == 1);
  REQUIRE(lab::find_finding(last.report, "not-serving"));
  CHECK((*lab::find_finding(last.report, "not-serving"))["server"] == old_leader);
  CHECK_FALSE(lab::find_finding(last.report, "round-trip-failed"));

  pods.pods("heal");
  auto healed = pods.zkverify("quorum --output json --wait 60s --servers " + pods.servers());
  INFO(healed);
  CHECK(healed.exit_code == 0);
}

// A wrong ID_OFFSET on Kubernetes: a follower restarted with another server's id, its zoo.cfg's line
// for that id on its own address (the shared ConfigMap, as init.sh rewrites it) and its own old line
// naming itself. Given the leader's id it never joins (the leader's id in every vote is its own, and
// its peers hang up on "a server with our own ID"): it answers nothing that names its id, so zkverify
// can say only that it does not serve, and what that may be. Given a follower's id it joins as a
// second voter with that id, and its own list gives it away: its name is another id's line.
TEST_CASE(
    "pods: a follower given another server's id (a wrong ID_OFFSET): the leader's, it never joins "
    "(not-serving says why it may be); a follower's, it joins (id-address-mismatch, critical)",
    "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  const std::vector<std::string> names{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"};
  auto id_of = [&](const std::string& name) {
    return std::to_string(std::ranges::find(names, name) - names.begin() + 1);
  };
  auto leader = pods.pods("leader");
  auto victim = follower_of(pods);
  // Restarted with `id`: the report once it answers srvr as `mode`, or after 20 s.
  auto restarted_with = [&](const std::string& id, const std::string& mode) {
    pods.pods("set-id", victim + " " + id);
    pods.pods("restart", victim);
    lab::Run run;
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      run = pods.zkverify("quorum --output json --servers " + pods.servers());
      if (server_in(run.json(), victim)["mode"] == mode) break;
    }
    return run;
  };

  auto stuck = restarted_with(id_of(leader), "not-serving");
  INFO(stuck);
  CHECK(stuck.exit_code == 1);
  CHECK(stuck.json()["leader"] == leader);
  REQUIRE(lab::find_finding(stuck.json(), "not-serving"));
  CHECK((*lab::find_finding(stuck.json(), "not-serving"))["server"] == victim);
  CHECK_THAT((*lab::find_finding(stuck.json(), "not-serving"))["message"].get<std::string>(),
             Contains("has another server's id"));
  // The leader's hang-up is the victim's next election attempt: on a busy machine it may come after
  // zkverify already saw the victim not serving (3204ad5's fresh clone, both lanes running). Its
  // log is read until the line is there, at most 30 s.
  {
    const auto log = (pods.dir() / victim / "server.log").string();
    auto seen = lab::sh("for i in $(seq 60); do grep -q 'We got a connection request from a server with our own ID' " +
                        log + " && exit 0; sleep 0.5; done; tail -n 20 " + log + "; exit 1");
    INFO("the victim's log has no hang-up for our own ID within 30 s; its last lines:\n" << seen.out);
    CHECK(seen.exit_code == 0);
  }

  std::string other;
  for (const auto& name : names)
    if (name != leader && name != victim && other.empty()) other = name;
  auto joined = restarted_with(id_of(other), "follower");
  INFO(joined);
  CHECK(joined.exit_code == 2);
  REQUIRE(lab::find_finding(joined.json(), "id-address-mismatch"));
  CHECK_THAT((*lab::find_finding(joined.json(), "id-address-mismatch"))["message"].get<std::string>(),
             Contains(victim + " reports server id " + id_of(other)) && Contains("another server's id"));
}

namespace {

// Every restart verdict on `servers` refuses, saying `id_words`: safe-to-restart, order, roll --dry-run.
void restarts_refused(const PodLab& pods, const std::string& servers, const std::string& id_words) {
  auto safe = pods.zkverify("safe-to-restart pzoo-0 --servers " + servers);
  INFO(safe);
  CHECK(safe.exit_code == 1);
  CHECK_THAT(safe.out + safe.err, Contains(id_words));
  auto order = pods.zkverify("order --servers " + servers);
  INFO(order);
  CHECK(order.exit_code == 1);
  CHECK_THAT(order.err, Contains("no restart is safe now") && Contains(id_words));
  auto roll = pods.zkverify("roll --dry-run --state " + (pods.dir() / "collision.state").string() + " --servers " +
                            servers + " -- true");
  INFO(roll);
  CHECK(roll.exit_code == 1);
  CHECK_THAT(roll.out, Contains(id_words));
}

}  // namespace

// The seed's own warning (issue 57): pzoo scaled to 4 without moving zoo's ID_OFFSET, so pzoo-3 starts
// with myid 4, zoo-0's, and the ensemble's zoo.cfg; the operator lists it. While zoo-0 leads, the
// leader hangs up on pzoo-3 (its own id): not serving, and every restart verdict refuses, since the
// leader's restart would let it in. Once zoo-1 leads, pzoo-3 joins as a second server 4: critical,
// both pods named with the proof (the leader counts one voting follower more than its list has, the
// two names reach two addresses), and still no restart verdict; no count exceeds its whole.
TEST_CASE(
    "pods: pzoo-3 started on zoo-0's id 4: refused by zoo-0 (not-serving, restarts refused), "
    "let in by zoo-1 (duplicate-id, critical, restarts refused)",
    "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  pods.pods("lead", "zoo-0");
  pods.pods("add-pod", "pzoo-3 4");
  const auto servers = pods.servers();
  REQUIRE_THAT(servers, Contains("pzoo-3=pzoo-3.pzoo:2181"));
  // The report once `done` says so of it, or after 30 s.
  auto quorum_until = [&](auto done) {
    lab::Run run;
    for (int attempt = 0; attempt < 30; ++attempt) {
      run = pods.zkverify("quorum --output json --servers " + servers);
      if (done(run.json())) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return run;
  };
  auto refused =
      quorum_until([](const nlohmann::json& report) { return server_in(report, "pzoo-3")["mode"] == "not-serving"; });
  INFO(refused);
  CHECK(refused.exit_code == 1);
  CHECK(refused.json()["leader"] == "zoo-0");
  REQUIRE(lab::find_finding(refused.json(), "not-serving"));
  CHECK((*lab::find_finding(refused.json(), "not-serving"))["server"] == "pzoo-3");
  CHECK_THAT((*lab::find_finding(refused.json(), "not-serving"))["message"].get<std::string>(),
             Contains("6 servers are listed where the membership has 5"));
  CHECK(refused.json()["serving_voters"] == 5);
  restarts_refused(pods, servers, "pzoo-3 does not serve and names no id");

  // zoo-0 gives the lead to zoo-1 while pzoo-3 is down (a second server 4 in the election is no
  // part of the seed's story, and lead counts on the members alone), then pzoo-3 starts again.
  pods.pods("stop", "pzoo-3");
  pods.pods("lead", "zoo-1");
  pods.pods("start", "pzoo-3");
  auto joined = quorum_until([](const nlohmann::json& report) {
    return lab::find_finding(report, "duplicate-id") != nullptr && server_in(report, "pzoo-3")["mode"] == "follower" &&
           server_in(report, "zoo-0")["mode"] == "follower";
  });
  INFO(joined);
  CHECK(joined.exit_code == 2);
  CHECK(joined.json()["leader"] == "zoo-1");
  REQUIRE(lab::find_finding(joined.json(), "duplicate-id"));
  const auto& duplicate = *lab::find_finding(joined.json(), "duplicate-id");
  CHECK(duplicate["severity"] == "critical");
  CHECK_THAT(duplicate["message"].get<std::string>(),
             Contains("server id 4 is reported by zoo-0 and pzoo-3, and they are two servers") &&
                 Contains("the leader zoo-1 counts 5 synced voting followers where its list has 4 other voters") &&
                 Contains("zoo-0.zoo and pzoo-3.pzoo reach") && Contains("Give pzoo-3 an id of its own"));
  CHECK(joined.json()["serving_voters"] == 5);
  CHECK(joined.json()["expected_voters"] == 5);
  restarts_refused(pods, servers, "server id 4 is reported by zoo-0 and pzoo-3");
}
