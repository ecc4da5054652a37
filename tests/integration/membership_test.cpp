// Membership changes on a real ensemble (issue 40): the upgrade thread's "+2" flow, two servers
// started on a 7-server list beside five on the 5-server list, is critical before any restart can
// split the ensemble; one server at a time (a 6-list beside the 5-list) is a change in progress that
// the gate lets through.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

// The first `count` entries of a --servers list.
std::string first_servers(const std::string& servers, int count) {
  std::string::size_type end = 0;
  for (int i = 0; i < count && end != std::string::npos; ++i) end = servers.find(',', end + (i ? 1 : 0));
  return servers.substr(0, end);
}

std::string finding_message(const nlohmann::json& report, const std::string& code) {
  const auto* finding = lab::find_finding(report, code);
  return finding ? (*finding)["message"].get<std::string>() : std::string("(no " + code + ")");
}

}  // namespace

TEST_CASE("membership: 5 to 6 one server at a time passes the gate, 5 and 7 at once is critical before the split",
          "[integration][part:membership]") {
  // pzoo-0..2 and zoo-0..1 on the 5-list; zoo-2 and zoo-3 laid out, not started.
  auto& ensemble =
      lab::shared("srvr,conf,mntr,ruok,isro", "--names pzoo-0,pzoo-1,pzoo-2,zoo-0,zoo-1,zoo-2,zoo-3 --members 5");
  auto all = ensemble.servers();

  // zoo-2 joins on a 6-list: the lists' majorities always meet (3 of 5, 4 of 6).
  ensemble.act("relist", "zoo-2 6");
  ensemble.act("start", "zoo-2");
  ensemble.act("wait", "zoo-2");
  auto six = zkverify("quorum --output json --servers " + first_servers(all, 6));
  INFO(six);
  CHECK(six.exit_code == 0);
  CHECK_THAT(finding_message(six.json(), "membership-changing"), Contains("zoo-2 holds version 0 (6 voters"));
  CHECK_FALSE(lab::find_finding(six.json(), "split-brain-possible"));
  CHECK(six.json()["membership_views"].size() == 2);
  CHECK(six.json()["expected_voters"] == 5);  // counted in the leader's list
  CHECK(six.json()["serving_voters"] == 5);
  auto safe = zkverify("safe-to-restart pzoo-0 --servers " + first_servers(all, 6));
  INFO(safe);
  CHECK(safe.exit_code == 0);
  // One step ahead: pzoo-0 starting again on zoo-2's 6-list is fine; on a 7-list (zoo-3's zoo.cfg, not
  // started yet), beside the 5-list the others hold, it would not be.
  ensemble.act("relist", "zoo-3 7");
  auto onto_six =
      zkverify("safe-to-restart pzoo-0 --to " + ensemble.dir() + "/zoo-2/zoo.cfg --servers " + first_servers(all, 6));
  INFO(onto_six);
  CHECK(onto_six.exit_code == 0);
  auto onto_seven =
      zkverify("safe-to-restart pzoo-0 --to " + ensemble.dir() + "/zoo-3/zoo.cfg --servers " + first_servers(all, 6));
  INFO(onto_seven);
  CHECK(onto_seven.exit_code == 1);
  CHECK_THAT(onto_seven.out, Contains("pzoo-0 would start again on a list of 7 voters") && Contains("share no server"));

  // zoo-3 on the 7-list beside the 5-list: {1,2,3} and {4,5,6,7} can each elect a leader.
  ensemble.act("start", "zoo-3");
  ensemble.act("wait", "zoo-3");
  auto seven = zkverify("quorum --output json --servers " + all);
  INFO(seven);
  CHECK(seven.exit_code == 2);
  CHECK_THAT(finding_message(seven.json(), "split-brain-possible"),
             Contains("zoo-3 holds version 0 (7 voters: ids 1, 2, 3, 4, 5, 6, 7)") && Contains("(ids 1, 2, 3)") &&
                 Contains("(ids 4, 5, 6, 7)"));
  CHECK(seven.json()["serving_voters"] == 5);  // not 7 of 5: zoo-2 and zoo-3 follow without a vote
  // The thread's next step, restarting zoo-1 onto the 7-list, is refused now, not after the split.
  auto refused = zkverify("safe-to-restart zoo-1 --servers " + all);
  INFO(refused);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.out, Contains("critical"));
}

namespace {

// One step of a plan followed on the lab: `lists` servers get the list of the first `count`
// (relist), `started` (if any) starts on it, then zkverify roll restarts `rolled` (a --servers list)
// one at a time with its gates, and `stopped` (if any) stops. Then the first `count` hold one list.
void follow_step(const lab::Lab& ensemble, const std::vector<std::string>& lists, int count, const std::string& started,
                 const std::string& rolled, const std::string& stopped) {
  INFO("the step to " << count << " voters");
  for (const auto& name : lists) ensemble.act("relist", name + " " + std::to_string(count));
  if (!started.empty()) {
    ensemble.act("start", started);
    ensemble.act("wait", started);
  }
  auto state = ensemble.dir() + "/plan-" + std::to_string(count) + ".json";
  if (!stopped.empty() && ensemble.leader() == stopped) {  // the plan's "if it leads, restart it first"
    auto moved = zkverify("step --servers " + rolled + " --restart " + stopped + " --step-timeout 60s -- " + ZKLAB +
                          " restart " + ensemble.dir() + " " + stopped);
    INFO(moved);
    REQUIRE(moved.exit_code == 0);
    CHECK(ensemble.leader() != stopped);
  }
  auto roll = zkverify("roll --output json --servers " + rolled + " --state " + state + " --step-timeout 60s -- " +
                       ZKLAB + " restart " + ensemble.dir() + " {}");
  INFO(roll);
  REQUIRE(roll.exit_code == 0);
  CHECK(roll.json()["watch"]["sessions_expired"] == 0);
  CHECK(roll.json()["watch"]["writes_lost"] == 0);
  if (!stopped.empty()) ensemble.act("stop", stopped);
  auto gate = zkverify("quorum --output json --servers " + first_servers(ensemble.servers(), count));
  INFO(gate);
  CHECK(gate.exit_code == 0);
  CHECK(gate.json()["membership_views"].size() == 1);
  CHECK(gate.json()["expected_voters"] == count);
}

}  // namespace

TEST_CASE("membership: zkverify plan's way from 5 to 7 and back to 6, followed on the lab, passes every gate, 0 lost",
          "[integration][part:membership]") {
  auto& ensemble =
      lab::shared("srvr,conf,mntr,ruok,isro", "--names pzoo-0,pzoo-1,pzoo-2,zoo-0,zoo-1,zoo-2,zoo-3 --members 5");
  auto all = ensemble.servers();
  auto five = ensemble.dir() + "/five.cfg", seven = ensemble.dir() + "/zoo-3/zoo.cfg";
  REQUIRE(lab::sh("cp " + ensemble.dir() + "/pzoo-0/zoo.cfg " + five).exit_code == 0);
  ensemble.act("relist", "zoo-3 7");

  auto up = zkverify("plan --output json --servers " + first_servers(all, 5) + " --to " + seven);
  INFO(up);
  REQUIRE(up.exit_code == 0);
  REQUIRE(up.json()["steps"].size() == 2);
  CHECK(up.json()["steps"][0]["id"] == 6);
  CHECK(up.json()["steps"][1]["id"] == 7);
  CHECK_THAT(zkverify("plan --servers " + first_servers(all, 5) + " --to " + seven).out,
             Contains("step 1 of 2: add server.6 (id 6); the list becomes ids 1, 2, 3, 4, 5, 6\n"));
  // Straight to the 7-list is what the plan avoids: step --to refuses it before COMMAND runs.
  auto straight = zkverify("step --servers " + first_servers(all, 5) + " --restart pzoo-0 --to " + seven + " -- false");
  INFO(straight);
  CHECK(straight.exit_code == 1);
  CHECK_THAT(straight.out + straight.err, Contains("pzoo-0 would start again on a list of 7 voters"));
  auto dry = zkverify("roll --dry-run --servers " + first_servers(all, 5) + " --state " + ensemble.dir() +
                      "/dry-run.json --to " + seven + " -- false");
  INFO(dry);
  CHECK(dry.exit_code == 1);
  CHECK_THAT(dry.out, Contains("would start again on a list of 7 voters"));
  const std::vector<std::string> names{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2", "zoo-3"};
  follow_step(ensemble, {names.begin(), names.begin() + 6}, 6, "zoo-2", first_servers(all, 6), "");
  follow_step(ensemble, names, 7, "zoo-3", all, "");

  // Back: the newest first. The one leaving keeps its list and is rolled with the others (listed, it
  // is not "unlisted"), then stopped.
  auto down = zkverify("plan --output json --servers " + all + " --to " + five);
  INFO(down);
  REQUIRE(down.exit_code == 0);
  REQUIRE(down.json()["steps"].size() == 2);
  CHECK(down.json()["steps"][0]["action"] == "remove");
  CHECK(down.json()["steps"][0]["id"] == 7);
  follow_step(ensemble, {names.begin(), names.begin() + 6}, 6, "", all, "zoo-3");
  // The last removal is the same kind of step (one fewer server to roll: left out for the suite's
  // time); what is left of the plan is that step, and at its list there is nothing to change.
  auto rest = zkverify("plan --output json --servers " + first_servers(all, 6) + " --to " + five);
  INFO(rest);
  REQUIRE(rest.json()["steps"].size() == 1);
  CHECK(rest.json()["steps"][0]["action"] == "remove");
  CHECK(rest.json()["steps"][0]["id"] == 6);
  auto six = ensemble.dir() + "/zoo-2/zoo.cfg";
  CHECK(zkverify("plan --servers " + first_servers(all, 6) + " --to " + six).out ==
        "nothing to change: the servers hold " + six + "'s list (ids 1, 2, 3, 4, 5, 6)\n");
}
