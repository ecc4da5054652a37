// Majorities of every size: the verdict, safe-to-restart and the restart order with 1 to 7 voters,
// observers beside them, at the exact edge of the majority. The numbers a quorum needs are written out
// here, not computed by the rule under test: a rule weakened for even counts (half of 4 is enough)
// fails these, as it passed every other test.

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "model/judge/checks.hpp"
#include "model/judge/restart_plan.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

// What a quorum of N voters is, as ZooKeeper's QuorumMaj counts it: more than half.
const std::map<int, int> kQuorumOf = {{1, 1}, {2, 2}, {3, 2}, {4, 3}, {5, 3}, {6, 4}, {7, 4}};

// `voters` voters v1..vN (v1 leads) and `observers` observers o1..oM, the membership known from the
// leader's conf; the first `serving` voters serve, the rest are unreachable. The write through the
// leader commits only when a quorum serves (as ZooKeeper's would).
EnsembleFacts ensemble(int voters, int observers, int serving) {
  EnsembleFacts facts;
  ConfFacts conf;
  for (int id = 1; id <= voters + observers; ++id) {
    bool observer = id > voters;
    auto name = observer ? fmt::format("o{}", id - voters) : fmt::format("v{}", id);
    conf.members.push_back({id, "h:2888", "h:3888", observer ? "observer" : "participant", ""});
    if (!observer && id > serving) facts.probes.push_back(unreachable(name));
    else
      facts.probes.push_back(server(name,
                                    observer  ? Mode::observer
                                    : id == 1 ? Mode::leader
                                              : Mode::follower,
                                    0x100000006, id));
  }
  if (serving > 0) facts.probes[0].conf->facts.members = conf.members;
  facts.round_trip = round_trip(facts.probes, facts.probes[0].address.name, 1);
  if (serving < kQuorumOf.at(voters)) {
    facts.round_trip->write_error = ZkError::connection_loss;
    facts.round_trip->write_zxid.reset();
    facts.round_trip->reads.clear();
  }
  return facts;
}

bool has(const Report& report, const std::string& code) {
  return std::ranges::any_of(report.findings, [&](const Finding& f) { return to_string(f.code) == code; });
}

}  // namespace

TEST_CASE("the verdict at the edge of the majority, for 1 to 7 voters, with and without observers") {
  for (auto [voters, needed] : kQuorumOf) {
    for (int observers : {0, 2}) {
      for (int serving = 1; serving <= voters; ++serving) {
        INFO(voters << " voters, " << observers << " observers, " << serving << " serving");
        auto report = judge(ensemble(voters, observers, serving));
        CHECK(report.expected_voters == voters);
        CHECK(report.serving_voters == serving);
        bool quorum = serving >= needed;
        CHECK(has(report, "no-quorum") == !quorum);
        CHECK(report.verdict == (!quorum            ? Verdict::critical
                                 : serving < voters ? Verdict::degraded
                                                    : Verdict::healthy));
      }
    }
  }
}

TEST_CASE("no-quorum says how many a quorum needs: 2 of 4 is short of 3, 3 of 6 short of 4, 1 of 2 short of 2") {
  for (auto [voters, serving, text] :
       std::vector<std::tuple<int, int, std::string>>{{4, 2, "2 of 4 voters are serving; a quorum needs 3"},
                                                      {6, 3, "3 of 6 voters are serving; a quorum needs 4"},
                                                      {2, 1, "1 of 2 voters are serving; a quorum needs 2"}}) {
    auto report = judge(ensemble(voters, 1, serving));
    auto finding =
        std::ranges::find_if(report.findings, [](const Finding& f) { return f.code == FindingCode::no_quorum; });
    REQUIRE(finding != report.findings.end());
    CHECK_THAT(finding->message, Contains(text));
  }
}

TEST_CASE("safe to restart a follower: only while a quorum of synced voters remains without it") {
  for (auto [voters, needed] : kQuorumOf) {
    if (voters < 2) continue;
    for (int observers : {0, 2}) {
      for (int serving = needed; serving <= voters; ++serving) {  // a quorum serves: a restart may be asked
        INFO(voters << " voters, " << observers << " observers, " << serving << " serving");
        auto report = judge(ensemble(voters, observers, serving));
        auto follower = restart_safety(report, "v2", {});
        CHECK(follower.safe == (serving - 1 >= needed));
        CHECK_THAT(follower.reason, Contains(fmt::format("a quorum needs {}", needed)));
        auto leader = restart_safety(report, "v1", {});  // every other voter is proven synced by the round trip
        CHECK(leader.safe == (serving - 1 >= needed));
        if (observers) CHECK(restart_safety(report, "o1", {}).safe);  // an observer is no voter
        if (serving < voters) CHECK(restart_safety(report, fmt::format("v{}", voters), {}).safe);  // down already
      }
    }
  }
}

TEST_CASE("safe to restart: 4 voters lose one and keep a quorum, not two, and 6 voters lose two, not three") {
  auto four = judge(ensemble(4, 2, 4));
  CHECK(restart_safety(four, "v2", {}).reason == "4 synced voters of 4; without v2 3 remain, a quorum needs 3");
  CHECK_FALSE(restart_safety(four, "v3", {}, {"v2"}).safe);  // v2 approved and not back: 2 would remain
  auto six = judge(ensemble(6, 0, 6));
  CHECK(restart_safety(six, "v3", {}, {"v2"}).safe);
  CHECK_FALSE(restart_safety(six, "v4", {}, {"v2", "v3"}).safe);
  auto two = restart_safety(judge(ensemble(2, 1, 2)), "v2", {});
  CHECK_FALSE(two.safe);
  CHECK(two.reason == "0 of 2 voters down or not proven synced: restarting v2 would leave 1 synced; a quorum needs 2");
}

TEST_CASE("safe to restart several at once (a StatefulSet deleted): without all of them a majority must remain") {
  using Names = std::vector<std::string>;
  auto five = judge(ensemble(5, 0, 5));
  auto statefulset = restart_safety(five, Names{"v2", "v3", "v4"}, {});  // the thread's "delete pzoo"
  CHECK_FALSE(statefulset.safe);
  CHECK(statefulset.reason == "5 synced voters of 5: restarting v2, v3, v4 together would leave 2; a quorum needs 3");
  auto two = restart_safety(five, Names{"v4", "v5"}, {});
  CHECK(two.safe);
  CHECK(two.reason == "5 synced voters of 5; without v4, v5 3 remain, a quorum needs 3");
  CHECK(restart_safety(five, Names{"v1", "v5"}, {}).safe);  // the leader among them: every other voter synced
  auto with_approved = restart_safety(five, Names{"v4", "v5"}, {}, {"v2"});
  CHECK_FALSE(with_approved.safe);
  CHECK_THAT(with_approved.reason, Contains("v4, v5 and v2 (approved to restart, not yet seen back)"));
  CHECK_FALSE(restart_safety(judge(ensemble(4, 2, 4)), Names{"v3", "v4"}, {}).safe);  // 2 of 4 is no quorum
  CHECK(restart_safety(judge(ensemble(4, 2, 4)), Names{"o1", "o2", "v4"}, {}).safe);  // observers cost nothing
  // One name is the one-server rule, word for word; an unknown name is named.
  CHECK(restart_safety(five, Names{"v2"}, {}).reason == restart_safety(five, "v2", {}).reason);
  CHECK(restart_safety(five, Names{"v2", "nobody"}, {}).reason == "nobody is not one of the listed servers");
}

TEST_CASE("restart order with an even count of voters: down first, observers, followers, the leader last") {
  auto report = judge(ensemble(4, 2, 3));  // v4 down
  std::vector<std::string> names;
  for (const auto& step : restart_order(report)) names.push_back(step.name);
  CHECK(names == std::vector<std::string>{"v4", "o1", "o2", "v2", "v3", "v1"});
}
