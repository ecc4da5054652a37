// The findings table (one vocabulary: enum, name, severity, meaning, action), the reference page
// generated from it, and the judges that consume codes by the enum.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/checks.hpp"
#include "model/judge/findings.hpp"
#include "model/judge/smoke_judge.hpp"
#include "model/render/findings_reference.hpp"
#include "model/render/report_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

const CaseResult& case_named(const std::vector<CaseResult>& cases, const std::string& id) {
  auto found = std::ranges::find(cases, id, &CaseResult::id);
  REQUIRE(found != cases.end());
  return *found;
}

}  // namespace

TEST_CASE("findings table: every code has one stable kebab-case name, a meaning and an action", "[findings]") {
  std::set<std::string_view> names;
  static const std::regex kebab("[a-z][a-z0-9]*(-[a-z0-9]+)*");
  for (const auto& row : finding_table()) {
    INFO(row.name);
    CHECK(names.insert(row.name).second);
    CHECK(std::regex_match(std::string(row.name), kebab));
    CHECK_FALSE(row.meaning.empty());
    CHECK_FALSE(row.action.empty());
    CHECK(finding_code_named(row.name) == row.code);
    CHECK(to_string(row.code) == row.name);
  }
  CHECK_FALSE(finding_code_named("no-such-finding"));
  // The names scripts already match on stay exactly as they were.
  CHECK(to_string(FindingCode::no_quorum) == "no-quorum");
  CHECK(to_string(FindingCode::round_trip_failed) == "round-trip-failed");
  CHECK(to_string(FindingCode::data_loss) == "data-loss");
  CHECK(info(FindingCode::data_loss).severity == Severity::critical);
}

TEST_CASE("docs/findings.md is the table as findings_doc writes it (scripts/gen-docs.sh regenerates it)",
          "[findings]") {
  std::ifstream page(std::string(ZKVERIFY_SOURCE_DIR) + "/docs/findings.md");
  REQUIRE(page);
  std::stringstream text;
  text << page.rdbuf();
  CHECK(text.str() == findings_reference_markdown());
}

TEST_CASE("JSON prints a finding's code by its table name", "[findings]") {
  auto facts = healthy_five();
  facts.probes[4] = unreachable("zoo-1");
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  auto json = render_json(judge(facts));
  CHECK_THAT(json, Contains(R"("code": "unreachable")"));
}

TEST_CASE("smoke's membership case fails when a listed server's id is outside the membership", "[findings][smoke]") {
  auto facts = healthy_five();
  for (int i = 0; i < 5; ++i) {
    ConfFacts conf;
    for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", "h:3"});
    conf.server_id = i == 4 ? 9 : i + 1;  // zoo-1 says it is server 9: not a member
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  auto report = judge(facts);
  REQUIRE(has_finding(report.findings, FindingCode::membership_unknown));
  auto cases = judge_ensemble(report);
  const auto& membership = case_named(cases, "membership-consistent");
  CHECK(membership.outcome == CaseOutcome::failed);
  CHECK_THAT(membership.message, Contains("server id 9, which is not in the ensemble's membership"));
}

TEST_CASE("smoke's membership case passes with nothing to compare only when no server reported one",
          "[findings][smoke]") {
  auto unreported = judge(healthy_five());  // srvr only: no conf anywhere
  CHECK_FALSE(unreported.membership_reported);
  auto unreported_cases = judge_ensemble(unreported);
  const auto& nothing = case_named(unreported_cases, "membership-consistent");
  CHECK(nothing.outcome == CaseOutcome::passed);
  CHECK_THAT(nothing.message, Contains("nothing to compare"));

  auto facts = healthy_five();
  for (int i = 0; i < 5; ++i) {
    ConfFacts conf;
    for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", "h:3"});
    conf.server_id = i + 1;
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  auto reported = judge(facts);
  CHECK(reported.membership_reported);
  auto reported_cases = judge_ensemble(reported);
  const auto& same = case_named(reported_cases, "membership-consistent");
  CHECK(same.outcome == CaseOutcome::passed);
  CHECK_THAT(same.message, Contains("every server reports the same membership"));
}

TEST_CASE("findings table: every JSON schema that lists finding codes lists every one", "[findings]") {
  int schemas = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ZKVERIFY_SOURCE_DIR) + "/docs/schema")) {
    auto schema = nlohmann::json::parse(std::ifstream(entry.path()));
    if (!schema.contains("$defs") || !schema["$defs"].contains("finding_code")) continue;
    ++schemas;
    auto listed = schema["$defs"]["finding_code"]["enum"].get<std::set<std::string>>();
    for (const auto& row : finding_table()) {
      INFO(entry.path().filename().string() << " lacks " << row.name);
      CHECK(listed.contains(std::string(row.name)));
    }
  }
  CHECK(schemas >= 5);  // quorum, step, roll, watch, serve's ensemble check
}
