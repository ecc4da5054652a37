#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/watch_judge.hpp"
#include "model/render/watch_view.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using std::chrono::milliseconds;

namespace {

WatchTotals calm() {
  WatchTotals totals;
  totals.sessions = 5;
  totals.negotiated_timeout = milliseconds(10000);
  totals.writes_attempted = 200;
  totals.writes_acked = 198;
  totals.writes_failed = 2;
  totals.longest_unavailable = milliseconds(700);
  totals.longest_disconnect = milliseconds(400);
  return totals;
}

bool has(const std::vector<Finding>& findings, const std::string& code) {
  return std::ranges::any_of(findings, [&](const Finding& f) { return to_string(f.code) == code; });
}

}  // namespace

TEST_CASE("watch: failed writes and disconnects alone are not failures") {
  CHECK(judge_watch(calm(), std::nullopt).empty());
  CHECK(judge_watch(calm(), milliseconds(1000)).empty());
}

TEST_CASE("watch: expiry, lost or reordered writes, stale reads and long windows fail") {
  auto totals = calm();
  totals.sessions_expired = 1;
  totals.ephemerals_lost = 1;
  CHECK(has(judge_watch(totals, std::nullopt), "session-expired"));
  CHECK_FALSE(has(judge_watch(totals, std::nullopt), "ephemeral-lost"));  // the expiry explains it

  totals = calm();
  totals.ephemerals_lost = 1;
  CHECK(has(judge_watch(totals, std::nullopt), "ephemeral-lost"));

  totals = calm();
  totals.writes_lost = 1;  // one acknowledged write lost is a loss
  CHECK(has(judge_watch(totals, std::nullopt), "writes-lost"));

  totals = calm();
  totals.writes_lost = 3;
  totals.writes_out_of_order = 1;
  totals.stale_reads = 2;
  auto findings = judge_watch(totals, std::nullopt);
  CHECK(has(findings, "writes-lost"));
  CHECK(has(findings, "writes-out-of-order"));
  CHECK(has(findings, "stale-read"));

  totals = calm();
  totals.longest_unavailable = milliseconds(12500);
  findings = judge_watch(totals, milliseconds(5000));
  REQUIRE(has(findings, "unavailable-too-long"));
  CHECK_THAT(findings.front().message, Contains("12.5s") && Contains("5.0s"));
  CHECK(findings.front().severity == Severity::critical);
}

TEST_CASE("watch events: one line each, text or JSON") {
  WatchEvent event{std::chrono::system_clock::time_point(std::chrono::milliseconds(1764500000123)),
                   milliseconds(2500),
                   WatchEventKind::reconnected,
                   "pzoo-0",
                   "zoo-1",
                   "after 400ms",
                   milliseconds(400)};
  auto text = render_event(event, OutputFormat::text);
  CHECK(std::ranges::count(text, '\n') == 1);
  CHECK_THAT(text, Contains("reconnected") && Contains("session pzoo-0 @zoo-1") && Contains(".123Z"));
  auto json = nlohmann::json::parse(render_event(event, OutputFormat::json));
  CHECK(json["event"] == "reconnected");
  CHECK(json["session"] == "pzoo-0");
  CHECK(json["server"] == "zoo-1");
  CHECK(json["duration_ms"] == 400);
  CHECK(json["elapsed_ms"] == 2500);
}

TEST_CASE("watch summary: the figures an operator asks for") {
  auto totals = calm();
  auto text = render_watch_summary(totals, {}, OutputFormat::text);
  CHECK_THAT(text, Contains("sessions 5 kept, 0 expired; writes 198 acknowledged, 0 lost, 2 failed"));
  CHECK_THAT(text, Contains("longest write-unavailability 700ms; longest disconnect 400ms (session timeout 10.0s)"));
  auto json =
      nlohmann::json::parse(render_watch_summary(totals, judge_watch(totals, milliseconds(100)), OutputFormat::json));
  CHECK(json["event"] == "summary");
  CHECK(json["verdict"] == "failed");
  CHECK(json["longest_unavailable_ms"] == 700);
  CHECK(json["findings"][0]["code"] == "unavailable-too-long");
}
