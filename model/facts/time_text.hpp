#pragma once
// Durations and times as people type and read them.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/facts/failure.hpp"

namespace zkverify {

// Parses "500ms", "2s", "5m", "1h" (a positive whole number and a unit). Throws BadInput
// naming the text and the accepted forms.
std::chrono::milliseconds parse_duration(std::string_view text);

// "1.5s", "250ms", "2m03s": short, for humans.
std::string format_duration(std::chrono::milliseconds duration);

// ISO 8601 in UTC: "2026-11-30T15:04:05Z", or with milliseconds "2026-11-30T15:04:05.123Z".
std::string iso8601(std::chrono::system_clock::time_point when, bool with_millis = false);

// The time iso8601() wrote (with or without milliseconds); none when `text` is not such a time.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text);

}  // namespace zkverify
