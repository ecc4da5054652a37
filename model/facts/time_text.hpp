#pragma once
// Durations and times as people type and read them.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/facts/failure.hpp"

namespace zkverify {

// Parses a duration as Go and Kubernetes write it: "250ms", "1.5s", "1m30s", "1h2m3s" (units ns, us,
// ms, s, m, h), rounded to milliseconds. Throws BadInput naming the text: not a duration, not
// greater than 0, or shorter than 1ms.
std::chrono::milliseconds parse_duration(std::string_view text);

// "1.5s", "250ms", "2m03s": short, for humans.
std::string format_duration(std::chrono::milliseconds duration);

// ISO 8601 in UTC: "2026-11-30T15:04:05Z", or with milliseconds "2026-11-30T15:04:05.123Z".
std::string iso8601(std::chrono::system_clock::time_point when, bool with_millis = false);

// The time iso8601() wrote (with or without milliseconds); none when `text` is not such a time.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text);

}  // namespace zkverify
