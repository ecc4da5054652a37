// zkverify smoke's text and JSON output.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model/render/smoke_view.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

std::vector<CaseResult> sample_cases() {
  return {{"round-trip", CaseOutcome::passed, "read back on 5/5", "", {}, "", 0.052},
          {"server-serving/zoo-1", CaseOutcome::failed, "zoo-1 is unreachable:\nrefused", "detail", {}, "", 0},
          {"latency/zoo-1", CaseOutcome::passed, "10 operations", "", {{"get.p99_ms", "1.500"}}, "", 0.3}};
}

}  // namespace

TEST_CASE("smoke text: one line per case with its time, then the summary", "[smoke]") {
  auto text = render_smoke_text(sample_cases(), 3.21);
  CHECK_THAT(text, Contains("PASS  round-trip              0.052s  read back on 5/5\n"));
  CHECK_THAT(text, Contains("FAIL  server-serving/zoo-1    0.000s  zoo-1 is unreachable: refused\n"));
  CHECK_THAT(text, EndsWith("\nsmoke: 2 passed, 1 failed (3.2 s)\n"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);
}

TEST_CASE("smoke text: skipped cases are counted in the summary only when there are some", "[smoke]") {
  auto cases = sample_cases();
  cases.push_back({"watch-fires", CaseOutcome::skipped, "not run: stopped", "", {}, "", 0});
  CHECK(smoke_summary(cases, 0.04) == "smoke: 2 passed, 1 failed, 1 skipped (0.0 s)");
  cases.clear();
  CHECK(smoke_summary(cases, 0) == "smoke: 0 passed, 0 failed (0.0 s)");
}

TEST_CASE("smoke json: counts, and every case with its outcome, figures and detail", "[smoke]") {
  auto document = nlohmann::json::parse(render_smoke_json(sample_cases(), 3.21));
  CHECK(document["passed"] == 2);
  CHECK(document["failed"] == 1);
  CHECK(document["skipped"] == 0);
  CHECK(document["seconds"] == Approx(3.21));
  REQUIRE(document["cases"].size() == 3);
  CHECK(document["cases"][1]["id"] == "server-serving/zoo-1");
  CHECK(document["cases"][1]["outcome"] == "failed");
  CHECK(document["cases"][1]["detail"] == "detail");
  CHECK(document["cases"][2]["properties"]["get.p99_ms"] == "1.500");
}
