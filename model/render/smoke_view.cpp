#include "model/render/smoke_view.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/render/json_text.hpp"

namespace zkverify {

namespace {

std::string_view label(CaseOutcome outcome) {
  switch (outcome) {
    case CaseOutcome::passed: return "PASS";
    case CaseOutcome::failed: return "FAIL";
    case CaseOutcome::skipped: return "SKIP";
  }
  return "?";
}

std::string_view outcome_name(CaseOutcome outcome) {
  switch (outcome) {
    case CaseOutcome::passed: return "passed";
    case CaseOutcome::failed: return "failed";
    case CaseOutcome::skipped: return "skipped";
  }
  return "?";
}

// One line: a message's line breaks would split a case over several.
std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ' ');
  return text;
}

}  // namespace

std::string smoke_summary(const std::vector<CaseResult>& cases, double seconds) {
  auto skipped = count(cases, CaseOutcome::skipped);
  return fmt::format("smoke: {} passed, {} failed{} ({:.1f} s)", count(cases, CaseOutcome::passed),
                     count(cases, CaseOutcome::failed), skipped ? fmt::format(", {} skipped", skipped) : "", seconds);
}

std::string render_smoke_text(const std::vector<CaseResult>& cases, double seconds) {
  std::size_t width = 0;
  for (const auto& result : cases) width = std::max(width, result.id.size());
  std::string text;
  for (const auto& result : cases)
    text += fmt::format("{}  {:<{}}  {:>7.3f}s  {}\n", label(result.outcome), result.id, width, result.seconds,
                        one_line(result.message));
  return text + smoke_summary(cases, seconds) + "\n";
}

std::string render_smoke_json(const std::vector<CaseResult>& cases, double seconds) {
  auto list = nlohmann::json::array();
  for (const auto& result : cases) {
    auto properties = nlohmann::json::object();
    for (const auto& [name, value] : result.properties) properties[name] = value;
    list.push_back({{"id", result.id},
                    {"outcome", outcome_name(result.outcome)},
                    {"seconds", result.seconds},
                    {"message", result.message},
                    {"detail", result.detail},
                    {"properties", properties}});
  }
  nlohmann::json document{{"passed", count(cases, CaseOutcome::passed)},
                          {"failed", count(cases, CaseOutcome::failed)},
                          {"skipped", count(cases, CaseOutcome::skipped)},
                          {"seconds", seconds},
                          {"cases", list}};
  return json_text(document) + "\n";
}

}  // namespace zkverify
