#pragma once
// `zkverify smoke`'s output: one line per case with its time, then the summary line
// "smoke: N passed, M failed (T s)"; or one JSON object. Pure.

#include <string>
#include <vector>

#include "model/judge/smoke_judge.hpp"

namespace zkverify {

// The text: "PASS  round-trip  0.052s  message" per case, then the summary (", K skipped" before
// the time only when cases were skipped).
std::string render_smoke_text(const std::vector<CaseResult>& cases, double seconds);

// {"passed", "failed", "skipped", "seconds", "cases": [{"id", "outcome", "seconds", "message",
// "detail", "properties"}]}.
std::string render_smoke_json(const std::vector<CaseResult>& cases, double seconds);

// The summary line alone, without a line break.
std::string smoke_summary(const std::vector<CaseResult>& cases, double seconds);

}  // namespace zkverify
