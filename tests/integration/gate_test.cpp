// The gate never lies (issue 8): IPv6, observers, kubernetes-kafka's server.N lines, the leader
// without --state and unproven sync, on a real ensemble shaped like each.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

bool has_finding(const nlohmann::json& report, const std::string& code) { return lab::find_finding(report, code); }

// With a follower already stopped, an observer stopped too: srvr cannot say zoo-0 observes, so the
// estimate is 4 voters, of which 2 serve; the committed write proves the quorum (issue 26): degraded,
// voters-uncertain, never no-quorum. The ledger saw zoo-0 observe: with it the estimate is right, 2 of 3.
void check_observer_down_too(const lab::Lab& ensemble, const std::string& quorum, const std::string& ledger) {
  ensemble.act("stop", "zoo-0");
  auto estimated = zkverify(quorum);
  INFO(estimated);
  CHECK(estimated.exit_code == 1);
  CHECK(estimated.json()["expected_voters"] == 4);
  CHECK(has_finding(estimated.json(), "voters-uncertain"));
  CHECK_FALSE(has_finding(estimated.json(), "no-quorum"));
  auto remembered = zkverify(quorum + " --state " + ledger);
  INFO(remembered);
  CHECK(remembered.exit_code == 1);
  CHECK(remembered.json()["expected_voters"] == 3);
  CHECK_FALSE(has_finding(remembered.json(), "voters-uncertain"));
  CHECK_FALSE(has_finding(remembered.json(), "no-quorum"));
}

}  // namespace

TEST_CASE("IPv6 with observers and kubernetes-kafka's server.N lines: healthy, degraded, never a false critical",
          "[integration][part:shapes]") {
  // 3 voters + 2 observers on [::1]; server.N without client addresses; ruok-only whitelist.
  auto& ensemble = lab::shared("ruok", "--host ::1 --observers 2 --no-client-address");
  REQUIRE_THAT(ensemble.servers(), Contains("=[::1]:"));
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  auto quorum = "quorum --output json --servers " + ensemble.servers();

  auto ledger = ensemble.dir() + "/roles.ledger.json";  // remembers who observed, for later
  auto healthy = zkverify(quorum + " --state " + ledger);
  INFO(healthy);
  REQUIRE(healthy.exit_code == 0);  // the round trip goes through the C client on ::1
  CHECK(healthy.json()["round_trip"]["reads_ok"] == 5);
  CHECK(healthy.json()["expected_voters"] == 3);
  CHECK(healthy.json()["serving_voters"] == 3);
  CHECK_THAT((*lab::find_finding(healthy.json(), "voters-counted"))["message"].get<std::string>(),
             Contains("less 2 observers"));

  // The AdminServer's membership (voting_view) differs per server only in client addresses.
  auto admin = zkverify(quorum + " --admin-port " + ensemble.admin_ports());
  INFO(admin);
  CHECK(admin.exit_code == 0);
  CHECK_FALSE(has_finding(admin.json(), "membership-mismatch"));
  CHECK_FALSE(has_finding(admin.json(), "membership-unknown"));
  CHECK(admin.json()["expected_voters"] == 3);

  // The leader without --state: safe once every other voter is proven in sync (the round trip).
  auto safe_leader = zkverify("safe-to-restart " + leader + " --servers " + ensemble.servers());
  INFO(safe_leader);
  CHECK(safe_leader.exit_code == 0);
  CHECK_THAT(safe_leader.out, Contains("An election follows"));
  // Unproven sync is not sync: --no-write and no mntr prove nothing about the followers.
  auto unproven = zkverify("safe-to-restart " + leader + " --no-write --servers " + ensemble.servers());
  CHECK(unproven.exit_code == 1);
  CHECK_THAT(unproven.out, Contains("not proven synced"));

  // One follower stopped: 2 of 3 voters hold the quorum (degraded, not critical).
  std::string follower = leader == "pzoo-0" ? "pzoo-1" : "pzoo-0";
  ensemble.act("stop", follower);
  auto degraded = zkverify(quorum);
  INFO(degraded);
  CHECK(degraded.exit_code == 1);
  CHECK_FALSE(has_finding(degraded.json(), "no-quorum"));
  CHECK(degraded.json()["serving_voters"] == 2);

  check_observer_down_too(ensemble, quorum, ledger);
  ensemble.act("start", "zoo-0");
  ensemble.act("start", follower);
  ensemble.act("wait");

  // step works on IPv6: sessions, writes and read-backs through the C client.
  auto step = zkverify("step --servers " + ensemble.servers() + " --restart zoo-0 --step-timeout 60s -- " + ZKLAB +
                       " restart " + ensemble.dir() + " zoo-0");
  INFO(step);
  CHECK(step.exit_code == 0);
  CHECK_THAT(step.out, Contains("sessions 5 kept, 0 expired"));
}

namespace {

// `servers` (NAME=HOST:PORT,...) without the entry named `name`.
std::string without(const std::string& servers, const std::string& name) {
  std::string kept;
  std::size_t start = 0;
  while (start <= servers.size()) {
    auto end = std::min(servers.find(',', start), servers.size());
    auto entry = servers.substr(start, end - start);
    if (!entry.starts_with(name + "=")) kept += (kept.empty() ? "" : ",") + entry;
    start = end + 1;
  }
  return kept;
}

}  // namespace

TEST_CASE("observers under the default whitelist, the leader unlisted, concurrent approvals on one ledger",
          "[integration][gate][part:shapes]") {
  auto& ensemble = lab::shared("", "--observers 2");  // pzoo-0..2 vote; zoo-0, zoo-1 observe; conf and mntr allowed
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  auto servers = ensemble.servers();

  auto healthy = zkverify("quorum --output json --servers " + servers);
  INFO(healthy);
  CHECK(healthy.exit_code == 0);
  CHECK(healthy.json()["expected_voters"] == 3);
  CHECK(healthy.json()["serving_voters"] == 3);

  // Issue 8, item 7: three of five listed, the leader not among them.
  auto unlisted = zkverify("quorum --output json --servers " + without(without(servers, leader), "zoo-1"));
  INFO(unlisted);
  CHECK(unlisted.exit_code == 1);
  CHECK_FALSE(has_finding(unlisted.json(), "no-leader"));
  REQUIRE(has_finding(unlisted.json(), "leader-unlisted"));
  CHECK_THAT((*lab::find_finding(unlisted.json(), "leader-unlisted"))["message"].get<std::string>(),
             Contains("it is not among the listed servers") && Contains("the membership names ids"));

  // Issue 8, item 4: two voters asked at once with one ledger; 3 voters may lose only one.
  std::vector<std::string> voters;
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2"})
    if (name != leader) voters.emplace_back(name);
  auto state = (std::filesystem::temp_directory_path() / ("gate-ledger-" + std::to_string(::getpid()))).string();
  auto ask = [&](const std::string& name) {
    return "($ZKVERIFY safe-to-restart " + name + " --servers " + servers + " --state " + state + "; echo exit=$?) > " +
           state + "." + name + " 2>&1 &";
  };
  REQUIRE(lab::sh(ask(voters[0]) + ask(voters[1]) + " wait").exit_code == 0);
  std::string answers;
  for (const auto& name : voters) {
    std::ifstream in(state + "." + name);
    answers += std::string(std::istreambuf_iterator<char>(in), {});
    std::filesystem::remove(state + "." + name);
  }
  INFO(answers);
  CHECK_THAT(answers, Contains("exit=0") && Contains("exit=1") && Contains("not yet seen back"));
  auto observer = zkverify("safe-to-restart zoo-0 --servers " + servers + " --state " + state);
  CHECK(observer.exit_code == 0);  // an observer is no voter: restarting it takes nothing from the quorum
  std::filesystem::remove(state);
  std::filesystem::remove(state + ".lock");

  // Issue 8, item 2, the default whitelist: one voter stopped, 2 of 3 hold the quorum.
  ensemble.act("stop", voters[0]);
  auto degraded = zkverify("quorum --output json --servers " + servers);
  INFO(degraded);
  CHECK(degraded.exit_code == 1);
  CHECK_FALSE(has_finding(degraded.json(), "no-quorum"));
  CHECK(degraded.json()["expected_voters"] == 3);
  CHECK(degraded.json()["serving_voters"] == 2);
}
