#pragma once
// A watch's events and summary, as text lines for a terminal or as JSON lines for scripts.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/books/watch_book.hpp"
#include "model/judge/report.hpp"
#include "model/render/format.hpp"

namespace zkverify {

std::string render_event(const WatchEvent& event, OutputFormat output);
std::string render_watch_summary(const WatchTotals& totals, const std::vector<Finding>& findings, OutputFormat output);
nlohmann::json to_json(const WatchTotals& totals);

}  // namespace zkverify
