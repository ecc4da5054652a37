// zkverify roll's pure parts (issue 16): the next server, the dry run's plan, the verdict, and what
// the text, JSON and HTML say.

#include <catch2/catch.hpp>

#include "model/judge/roll.hpp"
#include "model/render/roll_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

RollStep step_of(const std::string& server, const std::string& leader_before, const std::string& leader_after) {
  RollStep step;
  step.server = server;
  step.span = {1000, 5000};
  step.down = Window{1200, 3200};
  step.leader_before = leader_before;
  step.leader_after = leader_after;
  if (leader_before != leader_after) step.leaderless = Window{1200, 1900};
  step.longest_unavailable = std::chrono::milliseconds(700);
  return step;
}

RollRecord complete_roll() {
  RollRecord roll;
  roll.servers = {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"};
  for (const char* name : {"pzoo-0", "pzoo-2", "zoo-0", "zoo-1"})
    roll.steps.push_back(step_of(name, "pzoo-1", "pzoo-1"));
  roll.steps.push_back(step_of("pzoo-1", "pzoo-1", "zoo-0"));
  roll.complete = true;
  roll.duration_ms = 30000;
  roll.totals.sessions = 5;
  roll.totals.writes_acked = 512;
  return roll;
}

}  // namespace

TEST_CASE("roll: the next server is the first in order not done, the leader last") {
  auto report = judge(healthy_five());  // pzoo-1 leads
  CHECK(next_to_restart(report, {}, {}) == "pzoo-0");
  CHECK(next_to_restart(report, {"pzoo-0"}, {"pzoo-2"}) == "zoo-0");
  CHECK(next_to_restart(report, {"pzoo-0", "pzoo-2", "zoo-0"}, {"zoo-1"}) == "pzoo-1");
  CHECK_FALSE(next_to_restart(report, {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}, {}));
}

TEST_CASE("roll --dry-run: each server safe in turn, the leader once the others are done") {
  auto report = judge(healthy_five());
  auto plan = plan_roll(report, {"zoo-0"});
  REQUIRE(plan.steps.size() == 4);
  CHECK(plan.skipped == std::vector<std::string>{"zoo-0"});
  CHECK(plan.steps.back().server == "pzoo-1");
  CHECK(plan.all_safe());
  auto text = render_roll_plan(report, plan, OutputFormat::text);
  CHECK_THAT(text, Contains("nothing is run") && Contains("4. pzoo-1") &&
                       Contains("skipped (done in this restart round): zoo-0"));
}

TEST_CASE("roll --dry-run --to: a list whose majority can miss the servers' is refused, one more voter is not") {
  auto report = judge(healthy_five());  // pzoo-1 leads
  report.membership_views = {{std::nullopt, {1, 2, 3, 4, 5}, {}, {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}, {}}};
  auto seven = plan_roll(report, {}, std::set<int>{1, 2, 3, 4, 5, 6, 7});
  REQUIRE(seven.steps.size() == 5);
  CHECK_FALSE(seven.steps.front().safety.safe);
  CHECK_THAT(seven.steps.front().safety.reason, Contains("pzoo-0 would start again on a list of 7 voters"));
  CHECK_FALSE(seven.all_safe());
  CHECK(plan_roll(report, {}, std::set<int>{1, 2, 3, 4, 5, 6}).all_safe());
  CHECK(plan_roll(report, {}).all_safe());  // without --to: the plain dry run
  // The last one: the others are back on the 7-list, so it is the 5-list's only holder left.
  auto last = plan_roll(report, {"pzoo-0", "pzoo-2", "zoo-0", "zoo-1"}, std::set<int>{1, 2, 3, 4, 5, 6, 7});
  REQUIRE(last.steps.size() == 1);
  CHECK(last.steps.front().safety.safe);
}

TEST_CASE("roll: the verdict and what stopped it") {
  auto roll = complete_roll();
  CHECK(roll_verdict(roll) == Verdict::healthy);
  // What the servers said of the clients is evidence: a complete roll with it stays healthy, all done.
  roll.steps[0].findings.push_back(make_finding(FindingCode::clients_moved, "pzoo-0", "pzoo-0's 3 client connections"));
  roll.steps[1].findings.push_back(make_finding(FindingCode::ephemerals_fell, "pzoo-2", "fell from 4 to 3"));
  CHECK(roll_verdict(roll) == Verdict::healthy);
  CHECK(to_json(roll)["done"].size() == 5);
  auto json = to_json(roll);
  CHECK(json["leader_moves"] == 1);
  CHECK(json["done"].size() == 5);
  CHECK(json["remaining"].empty());
  CHECK_THAT(render_roll(roll, OutputFormat::text), Contains("roll: complete: 5 restarted, 0 skipped as done before") &&
                                                        Contains("moved pzoo-1 -> zoo-0 (700ms without)"));

  roll.complete = false;
  roll.steps.resize(2);
  roll.steps[1].findings.push_back(
      {Severity::warning, FindingCode::not_recovered, "pzoo-2", "not healthy 3 times in a row"});
  CHECK(roll_verdict(roll) == Verdict::degraded);
  CHECK(to_json(roll)["done"] == nlohmann::json::array({"pzoo-0"}));
  CHECK(to_json(roll)["remaining"] == nlohmann::json::array({"pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}));
  CHECK_THAT(
      render_roll(roll, OutputFormat::text),
      Contains("roll stopped: the step of pzoo-2 failed: not-recovered") && Contains("Run the same command again"));
  roll.watch_findings.push_back({Severity::critical, FindingCode::session_expired, "", "a session expired"});
  CHECK(roll_verdict(roll) == Verdict::critical);
}

TEST_CASE("roll: a step that cost a client its session restarted its server, and stops the roll") {
  auto roll = complete_roll();
  roll.complete = false;
  roll.steps.resize(2);
  roll.steps[1].findings.push_back(make_finding(FindingCode::client_session_lost, "pzoo-2",
                                                "Kafka broker 9 (/brokers/ids/9): held by session 0x9 before"));
  CHECK(roll_verdict(roll) == Verdict::degraded);
  CHECK(to_json(roll)["done"] == nlohmann::json::array({"pzoo-0", "pzoo-2"}));  // as the ledger's round has it
  CHECK_THAT(render_roll(roll, OutputFormat::text),
             Contains("roll stopped: the step of pzoo-2 cost clients their sessions: client-session-lost: Kafka "
                      "broker 9") &&
                 Contains("Done: pzoo-0, pzoo-2."));
}

TEST_CASE("roll --report: one lane per server, figures as in the JSON, every value escaped") {
  auto roll = complete_roll();
  roll.servers[4] = "zoo-1<b>";
  roll.steps[3].server = "zoo-1<b>";
  auto html = render_roll_html(roll);
  long lanes = 0;
  for (auto at = html.find("class=\"lane\""); at != std::string::npos; at = html.find("class=\"lane\"", at + 1))
    ++lanes;
  CHECK(lanes == 5);
  CHECK_THAT(html, Contains("id=\"writes-acked\">512<") && Contains("zoo-1&lt;b&gt;"));
  CHECK(html.find("zoo-1<b>") == std::string::npos);
  CHECK(html.find("http") == html.find("http://www.w3.org/2000/svg"));  // no external asset
}

TEST_CASE("roll --report: a lane per client, its sessions over time, the step that cost one marked", "[clients]") {
  auto roll = complete_roll();
  roll.steps[0].span = {1000, 5000};
  roll.steps[1].span = {6000, 9000};
  auto held = [](const char* path, std::int64_t owner) { return Registration{path, owner, 0, ""}; };
  for (auto& step : roll.steps) {
    step.client_changes.push_back(
        {RegistrationChange::kept, "/brokers/ids/1", held("/brokers/ids/1", 0x11), held("/brokers/ids/1", 0x11)});
    step.client_changes.push_back(
        {RegistrationChange::kept, "/controller", held("/controller", 0x11), held("/controller", 0x11)});
  }
  roll.steps[0].client_changes.push_back(
      {RegistrationChange::renewed, "/brokers/ids/9", held("/brokers/ids/9", 0x90), held("/brokers/ids/9", 0x91)});
  roll.steps[1].client_changes.push_back(
      {RegistrationChange::gone, "/brokers/ids/7", held("/brokers/ids/7", 0x70), Registration{}});
  roll.steps[1].client_changes.push_back(
      {RegistrationChange::added, "/brokers/ids/4", Registration{}, held("/brokers/ids/4", 0x40)});
  auto html = render_roll_html(roll);
  auto lane = [&](const std::string& path) {
    auto begin = html.find("data-path=\"" + path + "\"");
    REQUIRE(begin != std::string::npos);
    return html.substr(begin, html.find("</g>", begin) - begin);
  };
  CHECK_THAT(lane("/brokers/ids/1"),
             Contains(">broker 1<") && Contains("class=\"held\"") && !Contains("renewed") && !Contains("down"));
  CHECK_THAT(lane("/controller"), Contains(">controller<"));
  auto nine = lane("/brokers/ids/9");
  CHECK_THAT(nine, Contains("held by session 0x90") && Contains("held by session 0x91") &&
                       Contains("class=\"renewed\"") &&
                       Contains("session 0x90 ended during the step on pzoo-0; held by session 0x91 after"));
  CHECK_THAT(lane("/brokers/ids/7"),
             Contains("gone during the step on pzoo-2 (it was held by session 0x70)") && Contains("class=\"down\""));
  auto four = lane("/brokers/ids/4");  // added by the second step: held from its end only
  CHECK_THAT(four, Contains("held by session 0x40") && !Contains("class=\"down\""));
  CHECK_THAT(four, Contains("x=\"432.0\""));  // 150 + 9000 ms of 30000 across 940 px
  // Without --clients: no client lane.
  CHECK(render_roll_html(complete_roll()).find("lane-client") == std::string::npos);

  // Where the watch saw broker 9 go and come back, the mark is that window, not the whole step:
  // 150 + 2000 ms and 1500 ms wide, of 30000 across 940 px.
  roll.steps[0].client_absences.push_back({"/brokers/ids/9", 2000, 3500});
  html = render_roll_html(roll);
  nine = lane("/brokers/ids/9");
  CHECK_THAT(nine, Contains(R"(class="renewed" x="212.7" y=")") && Contains(R"(width="47.0")"));
  CHECK_THAT(nine, Contains(R"(class="held" x="150.0" y="338" width="62.7")"));  // 0x90's, until 2000 ms
  // Still gone at the step's end: red from when it went, to the roll's end.
  roll.steps[1].client_absences.push_back({"/brokers/ids/7", 7000, std::nullopt});
  html = render_roll_html(roll);
  CHECK_THAT(lane("/brokers/ids/7"), Contains(R"(class="down" x="369.3")"));
}

TEST_CASE("roll: the watch's events go on the roll's clock, whenever the watch started") {
  auto roll_started = zkverify::Clock::time_point{} + std::chrono::hours(1);
  WatchEvent event;
  event.kind = WatchEventKind::unavailable_end;
  event.at = roll_started + std::chrono::milliseconds(2500);
  event.elapsed = std::chrono::milliseconds(1900);  // the watch started 600ms after the roll
  event.duration = std::chrono::milliseconds(400);
  auto moved = on_roll_clock(event, roll_started);
  CHECK(moved.elapsed == std::chrono::milliseconds(2500));
  CHECK(moved.duration == event.duration);
  // A step that started at 2000ms on the roll's clock now holds the window (2100..2500ms) it caused.
  CHECK(moved.elapsed - moved.duration >= std::chrono::milliseconds(2000));
}

TEST_CASE("roll: each step's release before and after, and the ensemble's while mixed and once on one") {
  auto roll = complete_roll();
  roll.steps.resize(3);
  roll.complete = false;
  for (auto& step : roll.steps) {
    step.version_before = "3.8.0";
    step.version_after = "3.9.3";
  }
  auto last = judge(healthy_five());  // the check before the 3 steps: every server on 3.8.0
  for (auto& row : last.servers) row.version = "3.8.0";
  roll.last_report = last;
  auto text = render_roll(roll, OutputFormat::text);
  INFO(text);
  CHECK_THAT(text, Contains("VERSION") && Contains("3.8.0 -> 3.9.3"));
  CHECK_THAT(text, Contains("; 3 of 5 on 3.9.3, 2 on 3.8.0"));
  auto json = to_json(roll);
  CHECK(json["steps"][0]["version_before"] == "3.8.0");
  CHECK(json["steps"][0]["version_after"] == "3.9.3");
  CHECK_THAT(render_roll_html(roll), Contains("3.8.0 &rarr; 3.9.3"));

  for (auto& row : roll.last_report.servers) row.version = "3.9.3";  // the check after the last step
  CHECK_THAT(render_roll(roll, OutputFormat::text), Contains("; all 5 on 3.9.3"));
  // A restart on the same release says nothing of versions; unknown ones are null and "?".
  for (auto& step : roll.steps) step.version_before = "3.9.3";
  CHECK_THAT(render_roll(roll, OutputFormat::text), !Contains(" on 3.9.3"));
  roll.steps[0].version_after.clear();
  CHECK(to_json(roll)["steps"][0]["version_after"].is_null());
  CHECK_THAT(render_roll(roll, OutputFormat::text), Contains("3.9.3 -> ?"));
}
