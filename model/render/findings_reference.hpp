#pragma once
// The findings reference (docs/findings.md), written from the findings table.

#include <string>

namespace zkverify {

// Markdown: a heading, then one table row per finding code in the table's order.
std::string findings_reference_markdown();

}  // namespace zkverify
