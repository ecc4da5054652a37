#include "model/render/junit.hpp"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "model/render/utf8_text.hpp"

namespace zkverify {

namespace {

// XML 1.0's Char production: tab, line feed, carriage return, and the rest from U+0020 but the
// surrogates, U+FFFE and U+FFFF.
bool allowed_in_xml(char32_t point) {
  return point == 0x9 || point == 0xA || point == 0xD || (point >= 0x20 && point <= 0xD7FF) ||
         (point >= 0xE000 && point <= 0xFFFD) || point >= 0x10000;
}

std::string_view markup_reference(char c, bool attribute) {
  switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return attribute ? "&quot;" : "";
    case '\n': return attribute ? "&#10;" : "";
    case '\r': return "&#13;";  // a raw CR would be normalised away by the parser
    case '\t': return attribute ? "&#9;" : "";
    default: return "";
  }
}

std::string seconds_text(double seconds) { return fmt::format("{:.3f}", seconds < 0 ? 0.0 : seconds); }

std::string attribute(std::string_view name, std::string_view value) {
  return fmt::format(" {}=\"{}\"", name, xml_escape(value, true));
}

std::string testcase(const CaseResult& result, const std::string& classname) {
  std::string xml = fmt::format("    <testcase{}{}{}", attribute("classname", classname), attribute("name", result.id),
                                attribute("time", seconds_text(result.seconds)));
  auto out = result.figures.empty() ? result.message : result.figures;
  if (result.outcome == CaseOutcome::passed && out.empty()) return xml + "/>\n";
  xml += ">\n";
  if (result.outcome == CaseOutcome::failed)
    xml += fmt::format("      <failure{}{}>{}</failure>\n", attribute("message", result.message),
                       attribute("type", "failure"), xml_escape(result.detail));
  if (result.outcome == CaseOutcome::skipped)
    xml += fmt::format("      <skipped{}/>\n", attribute("message", result.message));
  if (!out.empty()) xml += fmt::format("      <system-out>{}</system-out>\n", xml_escape(out));
  return xml + "    </testcase>\n";
}

std::string properties(const std::vector<CaseResult>& cases) {
  std::string xml;
  for (const auto& result : cases)
    for (const auto& [name, value] : result.properties)
      xml +=
          fmt::format("      <property{}{}/>\n", attribute("name", result.id + "/" + name), attribute("value", value));
  return xml.empty() ? xml : "    <properties>\n" + xml + "    </properties>\n";
}

}  // namespace

std::string xml_escape(std::string_view text, bool attribute) {
  std::string escaped;
  escaped.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    auto character = decode_utf8(text, at);
    if (!character || !allowed_in_xml(character->first)) {
      escaped += kReplacementCharacter;
      at += character ? character->second : 1;
      continue;
    }
    auto reference = character->second == 1 ? markup_reference(text[at], attribute) : std::string_view();
    if (reference.empty()) escaped.append(text.substr(at, character->second));
    else escaped += reference;
    at += character->second;
  }
  return escaped;
}

std::string render_junit(const JUnitSuite& suite) {
  auto tests = suite.cases.size();
  auto failures = count(suite.cases, CaseOutcome::failed);
  auto skipped = count(suite.cases, CaseOutcome::skipped);
  auto time = seconds_text(suite.seconds);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml +=
      fmt::format("<testsuites{}{}{}{}{}>\n", attribute("name", suite.name), attribute("tests", std::to_string(tests)),
                  attribute("failures", std::to_string(failures)), attribute("errors", "0"), attribute("time", time));
  xml += fmt::format("  <testsuite{}{}{}{}{}{}{}{}>\n", attribute("name", suite.name),
                     attribute("tests", std::to_string(tests)), attribute("failures", std::to_string(failures)),
                     attribute("errors", "0"), attribute("skipped", std::to_string(skipped)), attribute("time", time),
                     attribute("timestamp", suite.timestamp), attribute("hostname", suite.hostname));
  xml += properties(suite.cases);
  for (const auto& result : suite.cases) xml += testcase(result, suite.classname);
  return xml + "  </testsuite>\n</testsuites>\n";
}

}  // namespace zkverify
