// The Kubernetes-shaped lab (issue 43, tests/lab/zkpods): servers reached by name, each pod on an
// address of its own that changes when it restarts, names that stop resolving, partitions. zkverify
// runs inside the lab's network namespace, as it would in a pod of the cluster.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

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

}  // namespace

TEST_CASE("pods: by name, each pod on its own address, and a follower back on a new address is found again",
          "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto servers = pods.servers();
  CHECK_THAT(servers, Contains("pzoo-0=pzoo-0.pzoo:2181"));
  auto healthy = pods.zkverify("quorum --output json --servers " + servers);
  INFO(healthy);
  CHECK(healthy.exit_code == 0);

  auto follower = follower_of(pods);
  auto before = pods.pods("address", follower);
  pods.pods("restart", follower);
  CHECK(pods.pods("address", follower) != before);
  auto back = pods.zkverify("quorum --output json --wait 60s --servers " + servers);
  INFO(back);
  CHECK(back.exit_code == 0);
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

TEST_CASE("pods: a name that does not resolve is a server down, named so, and --wait waits until it is back",
          "[integration][pods][part:pods]") {
  auto& pods = shared_pods();
  auto servers = pods.servers();
  auto follower = follower_of(pods);
  pods.pods("stop", follower);
  pods.pods("unpublish", follower);
  auto down = pods.zkverify("quorum --output json --servers " + servers);
  INFO(down);
  CHECK(down.exit_code == 1);  // degraded: four of five serve; not a usage error
  CHECK_THAT(server_in(down.json(), follower).dump(), Contains("does not resolve") || Contains("lookup of"));

  // Published and started again while the gate waits: it passes once the server is back.
  auto waited = pods.sh("(sleep 3; \"$PODS\" start \"$DIR\" " + follower + "; \"$PODS\" publish \"$DIR\" " + follower +
                        ") & \"$ZKVERIFY\" quorum --wait 90s --servers " + servers + "; rc=$?; wait; exit $rc");
  INFO(waited);
  CHECK(waited.exit_code == 0);
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
