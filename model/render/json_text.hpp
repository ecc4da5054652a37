#pragma once
// JSON as text that never throws: what servers send (and so reports quote) can be any bytes, and
// nlohmann::json refuses to print invalid UTF-8 by throwing. Such bytes become U+FFFD.

#include <string>

#include <nlohmann/json.hpp>

namespace zkverify {

// indent -1: one line (JSON lines); otherwise pretty, with that many spaces.
inline std::string json_text(const nlohmann::json& value, int indent = 2) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace zkverify
