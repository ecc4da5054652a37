#pragma once
// A Report as text for a terminal, or as one JSON object (schema in README.md).

#include <string>

#include <nlohmann/json.hpp>

#include "verifier/judge/report.hpp"

namespace zkverify::verifier {

std::string render_text(const Report& report);
nlohmann::json to_json(const Report& report);
std::string render_json(const Report& report);  // to_json, pretty-printed, with a trailing newline

}  // namespace zkverify::verifier
