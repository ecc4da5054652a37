// Membership views (model/judge/views.hpp): the split-brain rule against a brute-force search of
// every pair of voter sets of up to 7 servers, and the upgrade thread's flows judged step by step.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/checks.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/judge/views.hpp"
#include "model/render/report_view.hpp"
#include "model/render/restart_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

// By definition, without the rule's shortcut: some majority of `a` leaves a majority of `b` outside it.
bool brute_force_disjoint(const std::set<int>& a, const std::set<int>& b) {
  std::vector<int> members(a.begin(), a.end());
  for (unsigned pick = 0; pick < (1U << members.size()); ++pick) {
    std::set<int> quorum;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (pick & (1U << i)) quorum.insert(members[i]);
    if (quorum.size() * 2 <= a.size()) continue;  // not a majority of a
    auto rest = std::ranges::count_if(b, [&](int id) { return !quorum.contains(id); });
    if (static_cast<std::size_t>(rest) * 2 > b.size()) return true;
  }
  return false;
}

// The thread's ensemble: pzoo-0..2 (ids 1-3) and zoo-0..3 (ids 4-7), the first `count` listed; zoo-1
// leads, every other one follows. Server i holds the list of ids 1..lists[i].
EnsembleFacts ensemble(const std::vector<int>& lists) {
  const char* names[] = {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2", "zoo-3"};
  EnsembleFacts facts;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    int id = static_cast<int>(i) + 1;
    auto probe = server(names[i], id == 5 ? Mode::leader : Mode::follower, 0x100000006, id);
    for (int member = 1; member <= lists[i]; ++member)
      probe.conf->facts.members.push_back({member, "h:2888", "h:3888", "participant", "h:2181"});
    probe.conf->facts.config_version = 0;  // static lists: a reconfig's would be its zxid
    facts.probes.push_back(probe);
  }
  facts.round_trip = round_trip(facts.probes, "zoo-1", 1);
  return facts;
}

const Finding* find(const Report& report, FindingCode code) {
  auto it = std::ranges::find(report.findings, code, &Finding::code);
  return it == report.findings.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("split brain: the rule agrees with a brute-force search on every pair of voter sets of up to 7") {
  int disjoint = 0;
  for (unsigned a = 1; a < 128; ++a)
    for (unsigned b = 1; b < 128; ++b) {
      auto first = ids_of(a), second = ids_of(b);
      auto witness = disjoint_majorities(first, second);
      INFO("first " << a << ", second " << b);
      REQUIRE(witness.has_value() == brute_force_disjoint(first, second));
      if (!witness) continue;
      ++disjoint;
      CHECK(witness->first.size() * 2 > first.size());  // the witness is what it claims
      CHECK(witness->second.size() * 2 > second.size());
      CHECK(std::ranges::includes(first, witness->first));
      CHECK(std::ranges::includes(second, witness->second));
      CHECK(std::ranges::none_of(witness->first, [&](int id) { return witness->second.contains(id); }));
    }
  CHECK(disjoint > 0);
}

TEST_CASE("split brain: 5 to 7 in one step can split, one server at a time cannot") {
  auto five = ids_of(0b11111), six = ids_of(0b111111), seven = ids_of(0b1111111);
  auto witness = disjoint_majorities(five, seven);
  REQUIRE(witness);
  CHECK(witness->first == std::set<int>{1, 2, 3});
  CHECK(witness->second == std::set<int>{4, 5, 6, 7});
  CHECK_FALSE(disjoint_majorities(five, six));
  CHECK_FALSE(disjoint_majorities(six, seven));
  CHECK_FALSE(disjoint_majorities(seven, seven));
  CHECK(disjoint_majorities(ids_of(0b111), ids_of(0b111000)));  // two ensembles that share nobody
}

TEST_CASE("the thread's +2 flow: zoo-2 and zoo-3 on the 7-list beside five on the 5-list is critical at once") {
  auto report = judge(ensemble({5, 5, 5, 5, 5, 7, 7}));
  CHECK(report.verdict == Verdict::critical);
  const auto* split = find(report, FindingCode::split_brain_possible);
  REQUIRE(split);
  CHECK_THAT(split->message, Contains("pzoo-0, pzoo-1, pzoo-2, zoo-0, zoo-1 hold version 0 (5 voters") &&
                                 Contains("zoo-2, zoo-3 hold version 0 (7 voters: ids 1, 2, 3, 4, 5, 6, 7)") &&
                                 Contains("(ids 1, 2, 3)") && Contains("(ids 4, 5, 6, 7)"));
  // Counted in the leader's list: 5 voters, 5 serving; zoo-2 and zoo-3 follow without a vote.
  CHECK(report.expected_voters == 5);
  CHECK(report.serving_voters == 5);
  REQUIRE(report.membership_views.size() == 2);
  CHECK(report.membership_views[1].holders == std::vector<std::string>{"zoo-2", "zoo-3"});
  CHECK(report.membership_views[1].voters == std::vector<int>{1, 2, 3, 4, 5, 6, 7});
  CHECK_THAT(render_text(report), Contains("membership lists:\n  version 0: 5 voters (ids 1, 2, 3, 4, 5), "
                                           "held by pzoo-0, pzoo-1, pzoo-2, zoo-0, zoo-1\n"));
  auto json = to_json(report);
  CHECK(json["membership_views"][1]["version"] == "0");
}

TEST_CASE("one server at a time: 5-list and 6-list together are a change in progress, healthy, said as info") {
  auto report = judge(ensemble({5, 5, 5, 5, 5, 6}));
  INFO(render_text(report));
  CHECK(report.verdict == Verdict::healthy);
  REQUIRE(find(report, FindingCode::membership_changing));
  CHECK(find(report, FindingCode::membership_changing)->severity == Severity::info);
  CHECK_FALSE(find(report, FindingCode::split_brain_possible));
  CHECK(report.expected_voters == 5);
  CHECK(report.serving_voters == 5);
  // Then 6 and 7: every server on the 6-list but zoo-3, which joins on the 7-list.
  auto next = judge(ensemble({6, 6, 6, 6, 6, 6, 7}));
  CHECK(next.verdict == Verdict::healthy);
  CHECK(find(next, FindingCode::membership_changing));
  CHECK(next.expected_voters == 6);
  // A settled ensemble holds one list and says nothing of lists.
  auto settled = judge(ensemble({5, 5, 5, 5, 5}));
  CHECK(settled.membership_views.size() == 1);
  CHECK_FALSE(find(settled, FindingCode::membership_changing));
  CHECK_THAT(render_text(settled), !Contains("membership lists:"));
}

TEST_CASE("views: voting_view's list (no observers, no version) and conf's list of the same voters are one view") {
  auto facts = ensemble({5, 5, 5, 5, 5});
  for (auto& probe : facts.probes)  // every conf lists an observer, id 6, besides the five voters
    probe.conf->facts.members.push_back({6, "h:2890", "h:3890", "observer", "h:2181"});
  auto& from_admin = facts.probes[1].conf->facts;  // pzoo-1's, from the AdminServer's voting_view
  from_admin.members.pop_back();
  from_admin.voters_only = true;
  from_admin.config_version.reset();
  auto report = judge(facts);
  INFO(render_text(report));
  CHECK_FALSE(find(report, FindingCode::membership_mismatch));
  CHECK_FALSE(find(report, FindingCode::membership_changing));
  REQUIRE(report.membership_views.size() == 1);
  CHECK(report.membership_views[0].holders == std::vector<std::string>{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"});
  CHECK(report.membership_views[0].voters == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(report.membership_views[0].observers == std::vector<int>{6});  // conf's, kept
  CHECK(report.membership_views[0].version == 0);

  // What both report must agree: a voter at another quorum address is another list.
  from_admin.members[0].quorum_address = "elsewhere:2888";
  auto moved = judge(facts);
  CHECK(moved.membership_views.size() == 2);
  CHECK(find(moved, FindingCode::membership_mismatch));
  // So must two versions.
  from_admin.members[0].quorum_address = "h:2888";
  from_admin.config_version = 0x100000009;
  CHECK(judge(facts).membership_views.size() == 2);
}

TEST_CASE(
    "safe-to-restart --to: a server that would start again on a list whose majority misses another's is refused") {
  auto five = judge(ensemble({5, 5, 5, 5, 5}));
  auto seven = membership_refusal(five, {"zoo-1"}, {1, 2, 3, 4, 5, 6, 7});  // the thread's ConfigMap
  REQUIRE(seven);
  CHECK_FALSE(seven->safe);
  CHECK_THAT(seven->reason, Contains("zoo-1 would start again on a list of 7 voters (ids 1, 2, 3, 4, 5, 6, 7) while "
                                     "pzoo-0, pzoo-1, pzoo-2, zoo-0 hold one of 5 voters") &&
                                Contains("share no server"));
  CHECK_FALSE(membership_refusal(five, {"zoo-1"}, {1, 2, 3, 4, 5, 6}));  // one more: every majority meets
  CHECK_FALSE(membership_refusal(five, {"zoo-1"}, {1, 2, 3, 4, 5}));     // the same list
  // The last holder of the 5-list going over to the 7-list leaves no 5-list behind: nothing to split from.
  auto last = judge(ensemble({7, 7, 7, 7, 5, 7, 7}));
  CHECK_FALSE(membership_refusal(last, {"zoo-1"}, {1, 2, 3, 4, 5, 6, 7}));
  // No list reported (conf not whitelisted, 3.4): not known, so not approved.
  auto unknown = judge(healthy_five());
  REQUIRE(membership_refusal(unknown, {"zoo-1"}, {1, 2, 3}));
  CHECK_THAT(membership_refusal(unknown, {"zoo-1"}, {1, 2, 3})->reason,
             Contains("no server reported the list it holds"));
}

// Several servers restarted together: a list only they hold leaves with them, and the look goes on to
// the next list, which may be the one the new list's majority can miss.
TEST_CASE("safe-to-restart A B --to: a list held only by the servers restarting is passed over, not the end") {
  Report report;
  report.membership_views = {ViewSummary{0, {1, 2, 3, 4, 5}, {}, {"zoo-0", "zoo-1"}, {}},
                             ViewSummary{0, {1, 2, 3}, {}, {"pzoo-0", "pzoo-1", "pzoo-2"}, {}}};
  auto refusal = membership_refusal(report, {"zoo-0", "zoo-1"}, {1, 2, 3, 4, 5, 6, 7});
  REQUIRE(refusal);
  CHECK_THAT(refusal->reason, Contains("while pzoo-0, pzoo-1, pzoo-2 hold one of 3 voters"));
  // Once those are on the new list too, nothing is left to split from.
  CHECK_FALSE(membership_refusal(report, {"zoo-0", "zoo-1"}, {1, 2, 3, 4, 5, 6, 7}, {"pzoo-0", "pzoo-1", "pzoo-2"}));
}

namespace {

// The same servers as 3.4 runs them: conf says its id but no list; --zoo-cfg gives each one's list.
EnsembleFacts as_given(EnsembleFacts facts) {
  for (auto& probe : facts.probes) {
    facts.given_lists[probe.address.name] = ConfFacts{std::nullopt, probe.conf->facts.members, false, std::nullopt};
    probe.conf->facts.members.clear();
    probe.conf->facts.config_version.reset();
  }
  return facts;
}

}  // namespace

TEST_CASE("3.4: the lists --zoo-cfg gives stand in for the servers' own, and the split is seen in them") {
  auto settled = judge(as_given(ensemble({5, 5, 5, 5, 5})));
  REQUIRE(settled.membership_views.size() == 1);
  CHECK(settled.membership_views[0].given == settled.membership_views[0].holders);
  CHECK(settled.expected_voters == 5);
  CHECK(settled.verdict == Verdict::healthy);
  // Nothing given, nothing reported: no views (the gate cannot judge a membership change).
  auto unknown = ensemble({5, 5, 5, 5, 5});
  for (auto& probe : unknown.probes) probe.conf->facts.members.clear();
  CHECK(judge(unknown).membership_views.empty());

  // The thread's +2 flow on 3.4: zoo-2 and zoo-3 given the 7-list beside five given the 5-list.
  auto split = judge(as_given(ensemble({5, 5, 5, 5, 5, 7, 7})));
  const auto* brain = find(split, FindingCode::split_brain_possible);
  REQUIRE(brain);
  CHECK(split.verdict == Verdict::critical);
  CHECK_THAT(brain->message, Contains("zoo-2, zoo-3 hold a list (7 voters: ids 1, 2, 3, 4, 5, 6, 7; by --zoo-cfg for "
                                      "zoo-2, zoo-3)"));
  CHECK_THAT(render_text(split), Contains("held by zoo-2, zoo-3 (zoo-2, zoo-3: by --zoo-cfg)"));
  // safe-to-restart --to reads the same views: one server onto a 7-list among 5-list holders is refused.
  auto five = judge(as_given(ensemble({5, 5, 5, 5, 5})));
  CHECK(membership_refusal(five, {"zoo-1"}, {1, 2, 3, 4, 5, 6, 7}));
  CHECK_FALSE(membership_refusal(five, {"zoo-1"}, {1, 2, 3, 4, 5, 6}));
}

TEST_CASE("a server's own list wins over the one --zoo-cfg gives for it") {
  auto facts = ensemble({5, 5, 5, 5, 5});  // every server reports the 5-list (3.5+)
  auto seven = ensemble({7, 7, 7, 7, 7, 7, 7});
  for (auto& probe : facts.probes)  // the operator's files say 7
    facts.given_lists[probe.address.name] = seven.probes.front().conf->facts;
  auto report = judge(facts);
  REQUIRE(report.membership_views.size() == 1);
  CHECK(report.membership_views[0].voters == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(report.membership_views[0].given.empty());
  // One server reports none (conf refused): its given list is used, the others' own.
  facts.probes[4].conf->facts.members.clear();
  auto mixed = judge(facts);
  REQUIRE(mixed.membership_views.size() == 2);
  CHECK(mixed.membership_views[1].given == std::vector<std::string>{"zoo-1"});
}

TEST_CASE("order --to: the first server whose restart onto the new list could elect two leaders is named") {
  auto five = judge(ensemble({5, 5, 5, 5, 5}));
  auto steps = restart_order(five);
  REQUIRE(steps.size() == 5);
  CHECK(steps.back().name == "zoo-1");  // the leader last
  // The thread's ConfigMap: the very first restart puts one server on the 7-list beside four on the 5-list.
  auto seven = first_split(five, steps, {1, 2, 3, 4, 5, 6, 7});
  REQUIRE(seven);
  CHECK(seven->server == steps.front().name);
  CHECK_THAT(seven->reason, Contains("share no server"));
  CHECK_FALSE(first_split(five, steps, {1, 2, 3, 4, 5, 6}));  // one voter more: every step is safe
  // Half way through a one-voter change (two servers already on the 6-list): the rest follow safely.
  auto half = judge(ensemble({6, 6, 5, 5, 5}));
  CHECK_FALSE(first_split(half, restart_order(half), {1, 2, 3, 4, 5, 6}));
  // ... but not onto a 7-list from there: the 5-list's holders and the 7-list can be disjoint.
  REQUIRE(first_split(half, restart_order(half), {1, 2, 3, 4, 5, 6, 7}));

  auto json =
      nlohmann::json::parse(render_order(five, steps, OutputFormat::json, OrderTo{{1, 2, 3, 4, 5, 6, 7}, seven}));
  CHECK(json["to"]["voters"] == nlohmann::json::array({1, 2, 3, 4, 5, 6, 7}));
  CHECK(json["to"]["refusal"]["server"] == steps.front().name);
  auto safe = nlohmann::json::parse(render_order(five, steps, OutputFormat::json, OrderTo{{1, 2, 3, 4, 5, 6}, {}}));
  CHECK(safe["to"]["refusal"].is_null());
  CHECK_FALSE(nlohmann::json::parse(render_order(five, steps, OutputFormat::json)).contains("to"));
  // Nothing reported (conf not whitelisted, 3.4): not known, so the first step is refused.
  auto unknown = judge(healthy_five());
  REQUIRE(first_split(unknown, restart_order(unknown), {1, 2, 3}));
}

namespace {

// The kubernetes-kafka shape: every server lists the others by name and its own line on the
// address it binds (their init.sh writes server.ID=0.0.0.0), with `own_port` as its own ports' base.
EnsembleFacts bound_to_own_address(int own_port = 2888) {
  const char* names[] = {"pzoo-0.pzoo", "pzoo-1.pzoo", "pzoo-2.pzoo", "zoo-0.zoo", "zoo-1.zoo"};
  auto facts = ensemble({5, 5, 5, 5, 5});
  for (auto& probe : facts.probes) {
    int own = *probe.conf->facts.server_id;
    for (auto& member : probe.conf->facts.members) {
      std::string host = member.id == own ? "0.0.0.0" : names[member.id - 1];
      int base = member.id == own ? own_port : 2888;
      member.quorum_address = host + ":" + std::to_string(base);
      member.election_address = host + ":" + std::to_string(base + 1000);
    }
  }
  return facts;
}

}  // namespace

TEST_CASE("views: a server's own line on the address it binds (0.0.0.0) is the list the others hold") {
  auto views = views_of(bound_to_own_address());
  REQUIRE(views.size() == 1);
  CHECK(views[0].holders.size() == 5);
  for (const auto& member : views[0].members) CHECK_THAT(member.quorum_address, !Contains("0.0.0.0"));
  auto report = judge(bound_to_own_address());
  CHECK(report.verdict == Verdict::healthy);
  CHECK_FALSE(find(report, FindingCode::membership_mismatch));
}

TEST_CASE("views: an own line is compared by its ports and role, other lines by their hosts too") {
  auto ports = bound_to_own_address(2890);  // every server binds other ports than the others dial
  CHECK(views_of(ports).size() == 5);
  CHECK(find(judge(ports), FindingCode::membership_mismatch));

  auto renamed = bound_to_own_address();
  renamed.probes[0].conf->facts.members[1].quorum_address = "elsewhere:2888";  // pzoo-0 dials pzoo-1 elsewhere
  auto views = views_of(renamed);
  REQUIRE(views.size() == 2);
  CHECK(views[0].holders == std::vector<std::string>{"pzoo-0"});
  CHECK(views[1].holders.size() == 4);  // pzoo-1's own line is the name most others dial
  CHECK(find(judge(renamed), FindingCode::membership_mismatch));
}
