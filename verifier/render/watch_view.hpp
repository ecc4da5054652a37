#pragma once
// A watch's events and summary, as text lines for a terminal or as JSON lines for scripts.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/watch_book.hpp"
#include "verifier/render/format.hpp"
#include "verifier/judge/report.hpp"

namespace zkverify::verifier {

std::string render_event(const probes::WatchEvent& event, OutputFormat output);
std::string render_watch_summary(const probes::WatchTotals& totals, const std::vector<Finding>& findings,
                                 OutputFormat output);
nlohmann::json to_json(const probes::WatchTotals& totals);

}  // namespace zkverify::verifier
