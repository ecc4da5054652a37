#include "model/render/findings_reference.hpp"

#include <fmt/format.h>

#include "model/judge/findings.hpp"

namespace zkverify {

namespace {

// A table cell: a '|' would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string findings_reference_markdown() {
  std::string out =
      "# Findings\n\n"
      "Every finding zkverify reports, by the code JSON and text print (`findings[].code`). The severity is the\n"
      "usual one: a finding's severity sets the verdict (any critical: critical, exit 2; else any warning:\n"
      "degraded, exit 1). Generated from the table in `model/judge/findings.cpp` by `tests/tools/findings_doc`\n"
      "(`scripts/gen-docs.sh`); a unit test fails when this page and the table differ.\n\n"
      "| code | severity | meaning | what to do |\n"
      "| --- | --- | --- | --- |\n";
  for (const auto& row : finding_table()) {
    auto severity = std::string(to_string(row.severity));
    if (!row.other_severities.empty()) severity += fmt::format(" ({})", row.other_severities);
    out += fmt::format("| `{}` | {} | {} | {} |\n", row.name, cell(severity), cell(row.meaning), cell(row.action));
  }
  return out;
}

}  // namespace zkverify
