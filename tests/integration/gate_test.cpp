// The gate never lies (issue 8): IPv6, observers, kubernetes-kafka's server.N lines, the leader
// without --state and unproven sync, on a real ensemble shaped like each.

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

bool has_finding(const nlohmann::json& report, const std::string& code) { return lab::find_finding(report, code); }

}  // namespace

TEST_CASE("IPv6 with observers and kubernetes-kafka's server.N lines: healthy, degraded, never a false critical",
          "[integration]") {
  // 3 voters + 2 observers on [::1]; server.N without client addresses; ruok-only whitelist.
  lab::Lab ensemble("ruok", "--host ::1 --observers 2 --no-client-address");
  REQUIRE_THAT(ensemble.servers(), Contains("=[::1]:"));
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  auto quorum = "quorum --output json --servers " + ensemble.servers();

  auto healthy = zkverify(quorum);
  INFO(healthy.out << healthy.err);
  REQUIRE(healthy.exit_code == 0);  // the round trip goes through the C client on ::1
  CHECK(healthy.json()["round_trip"]["reads_ok"] == 5);
  CHECK(healthy.json()["expected_voters"] == 3);
  CHECK(healthy.json()["serving_voters"] == 3);
  CHECK_THAT((*lab::find_finding(healthy.json(), "voters-counted"))["message"].get<std::string>(),
             Contains("less 2 observers"));

  // The AdminServer's membership (voting_view) differs per server only in client addresses.
  auto admin = zkverify(quorum + " --admin-port " + ensemble.admin_ports());
  INFO(admin.out << admin.err);
  CHECK(admin.exit_code == 0);
  CHECK_FALSE(has_finding(admin.json(), "membership-mismatch"));
  CHECK_FALSE(has_finding(admin.json(), "membership-unknown"));
  CHECK(admin.json()["expected_voters"] == 3);

  // The leader without --state: safe once every other voter is proven in sync (the round trip).
  auto safe_leader = zkverify("safe-to-restart " + leader + " --servers " + ensemble.servers());
  INFO(safe_leader.out << safe_leader.err);
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
  INFO(degraded.out << degraded.err);
  CHECK(degraded.exit_code == 1);
  CHECK_FALSE(has_finding(degraded.json(), "no-quorum"));
  CHECK(degraded.json()["serving_voters"] == 2);
  ensemble.act("start", follower);
  ensemble.act("wait");

  // step works on IPv6: sessions, writes and read-backs through the C client.
  auto step = zkverify("step --servers " + ensemble.servers() + " --restart zoo-0 --timeout 60s -- " + ZKLAB +
                       " restart " + ensemble.dir() + " zoo-0");
  INFO(step.out << step.err);
  CHECK(step.exit_code == 0);
  CHECK_THAT(step.out, Contains("sessions 5 kept, 0 expired"));
}
