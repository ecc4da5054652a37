// zkverify plan (model/judge/membership_plan.hpp): the seed's 5 -> 7 and back, a replacement, every
// plan between every two voter sets of up to 7 checked by the split-brain rule, and the refusals.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/checks.hpp"
#include "model/judge/membership_plan.hpp"
#include "model/render/plan_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using synthetic::ids_of;

namespace {

const char* const kNames[] = {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2", "zoo-3"};

// The thread's ensemble judged: the servers of ids `listed` (named as the seed names them) all hold
// the list `held`; `leader` leads, the others follow.
Report holding(const std::set<int>& listed, const std::set<int>& held, int leader) {
  EnsembleFacts facts;
  for (int id : listed) {
    auto probe = synthetic::server(kNames[id - 1], id == leader ? Mode::leader : Mode::follower, 0x100000006, id);
    for (int member : held) probe.conf->facts.members.push_back({member, "h:2888", "h:3888", "participant", "h:2181"});
    probe.conf->facts.config_version = 0x100000000;
    facts.probes.push_back(probe);
  }
  facts.round_trip = synthetic::round_trip(facts.probes, kNames[leader - 1], 1);
  return judge(facts);
}

std::map<int, std::string> target(const std::set<int>& ids) {
  std::map<int, std::string> named;
  for (int id : ids) named[id] = kNames[id - 1];
  return named;
}

}  // namespace

TEST_CASE("plan: the seed's 5 -> 7 goes one voter at a time, each step restarting the others, the leader last") {
  auto report = holding({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, 5);
  REQUIRE(report.verdict == Verdict::healthy);
  auto plan = plan_membership(report, target({1, 2, 3, 4, 5, 6, 7}));
  REQUIRE(plan.refusal.empty());
  CHECK(plan.from == std::set<int>{1, 2, 3, 4, 5});
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].adds);
  CHECK(plan.steps[0].name == "zoo-2");
  CHECK(plan.steps[0].voters == std::set<int>{1, 2, 3, 4, 5, 6});
  CHECK(plan.steps[0].restart == std::vector<std::string>{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"});
  CHECK(plan.steps[1].name == "zoo-3");
  CHECK(plan.steps[1].voters == std::set<int>{1, 2, 3, 4, 5, 6, 7});
  // zoo-2, started in step 1, is restarted onto the 7-list in step 2, before the leader.
  CHECK(plan.steps[1].restart == std::vector<std::string>{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-2", "zoo-1"});
  CHECK_FALSE(plan_can_split(plan));

  auto text = render_plan(plan, "new/zoo.cfg", OutputFormat::text);
  CHECK_THAT(text, Contains("from 5 voters (ids 1, 2, 3, 4, 5) to 7 (ids 1, 2, 3, 4, 5, 6, 7) in 2 steps"));
  CHECK_THAT(text, Contains("step 1 of 2: add zoo-2 (id 6); the list becomes ids 1, 2, 3, 4, 5, 6\n"));
  CHECK_THAT(text, Contains("  2. start zoo-2 on it, then: zkverify quorum --wait\n"));
  CHECK_THAT(text, Contains("pzoo-0, pzoo-1, pzoo-2, zoo-0, zoo-1 (the leader last)\n"));
  auto json = nlohmann::json::parse(render_plan(plan, "new/zoo.cfg", OutputFormat::json));
  CHECK(json["steps"][1]["action"] == "add");
  CHECK(json["steps"][1]["id"] == 7);
  CHECK(json["steps"][1]["voters"] == nlohmann::json({1, 2, 3, 4, 5, 6, 7}));
  CHECK(json["leader"] == "zoo-1");
  CHECK(json["refusal"].is_null());
}

TEST_CASE("plan: back from 7 to 5 removes the newest voter first, restarting those that stay, then stopping it") {
  auto report = holding({1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7}, 7);
  auto plan = plan_membership(report, target({1, 2, 3, 4, 5}));
  REQUIRE(plan.steps.size() == 2);
  CHECK_FALSE(plan.steps[0].adds);
  CHECK(plan.steps[0].name == "zoo-3");
  CHECK(plan.steps[0].voters == std::set<int>{1, 2, 3, 4, 5, 6});
  // zoo-3 leads: it is not restarted but stopped once the others hold the 6-list; an election follows.
  CHECK(plan.steps[0].restart == std::vector<std::string>{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2"});
  auto text = render_plan(plan, "old/zoo.cfg", OutputFormat::text);
  CHECK_THAT(text, Contains("  2. if zoo-3 leads, restart it first, on its old list (zkverify step): another server "
                            "is elected and it follows\n"));
  CHECK_THAT(text,
             Contains("  4. stop zoo-3 (if it leads, the others elect a leader), then: zkverify quorum --wait\n"));
  CHECK(plan.steps[1].name == "zoo-2");
  CHECK(plan.steps[1].voters == std::set<int>{1, 2, 3, 4, 5});
  CHECK(plan.steps[1].restart == std::vector<std::string>{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"});
  CHECK_FALSE(plan_can_split(plan));
}

TEST_CASE("plan: replacing a voter adds the new one before removing the old: never fewer voters than at either end") {
  auto plan = plan_membership(holding({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, 1), target({1, 2, 3, 4, 6}));
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].adds);
  CHECK(plan.steps[0].voters.size() == 6);
  CHECK_FALSE(plan.steps[1].adds);
  CHECK(plan.steps[1].voters == std::set<int>{1, 2, 3, 4, 6});
  auto same = plan_membership(holding({1, 2, 3}, {1, 2, 3}, 1), target({1, 2, 3}));
  CHECK(same.refusal.empty());
  CHECK(same.steps.empty());
  CHECK_THAT(render_plan(same, "zoo.cfg", OutputFormat::text), Contains("nothing to change"));
}

TEST_CASE("plan: between every two voter sets of up to 7, each step changes one voter and none can split") {
  int plans = 0;
  for (unsigned from = 1; from < 128; ++from) {
    auto held = ids_of(from);
    auto report = holding(held, held, *held.begin());
    for (unsigned to = 1; to < 128; ++to) {
      auto plan = plan_membership(report, target(ids_of(to)));
      INFO("from " << from << " to " << to);
      REQUIRE(plan.refusal.empty());
      CHECK_FALSE(plan_can_split(plan));
      auto before = plan.from;
      for (const auto& step : plan.steps) {
        std::set<int> changed;
        std::ranges::set_symmetric_difference(before, step.voters, std::inserter(changed, changed.end()));
        CHECK(changed == std::set<int>{step.id});
        before = step.voters;
      }
      CHECK(before == plan.to);
      ++plans;
    }
  }
  CHECK(plans == 127 * 127);
  // The check itself: the thread's one-step 5 -> 7 is a plan that can split.
  MembershipPlan one_step{
      {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 6, 7}, "", {{true, 6, "zoo-2", {1, 2, 3, 4, 5, 6, 7}, {}}}, ""};
  CHECK(plan_can_split(one_step));
}

TEST_CASE("plan: refused while servers hold two lists, when none reported its list, and when critical") {
  auto changing = holding({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, 5);
  changing.membership_views.push_back({std::nullopt, {1, 2, 3, 4, 5, 6}, {}, {"zoo-2"}, {}});
  auto refused = plan_membership(changing, target({1, 2, 3, 4, 5, 6, 7}));
  CHECK(refused.steps.empty());
  CHECK_THAT(refused.refusal, Contains("the servers hold 2 lists") && Contains("finish it"));
  CHECK_THAT(render_plan(refused, "zoo.cfg", OutputFormat::text), Contains("no plan: the servers hold 2 lists"));

  auto unknown = holding({1, 2, 3}, {1, 2, 3}, 1);
  unknown.membership_views.clear();
  CHECK_THAT(plan_membership(unknown, target({1, 2, 3, 4})).refusal,
             Contains("whitelist conf, give --admin-port, or for 3.4 --zoo-cfg"));

  auto critical = holding({1, 2, 3}, {1, 2, 3}, 1);
  critical.verdict = Verdict::critical;
  CHECK_THAT(plan_membership(critical, target({1, 2, 3, 4})).refusal, Contains("critical"));
}
