#include "model/facts/time_text.hpp"

#include <charconv>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

namespace zkverify {

std::chrono::milliseconds parse_duration(std::string_view text) {
  auto fail = [&] { return BadInput(fmt::format("'{}' is not a duration (use e.g. 500ms, 2s, 5m, 1h)", text)); };
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data() || value <= 0) throw fail();
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else throw fail();
  if (value > (std::int64_t{1} << 40) / scale) throw fail();  // ~35 years: a typo, not a deadline
  return std::chrono::milliseconds(value * scale);
}

std::string format_duration(std::chrono::milliseconds duration) {
  auto ms = duration.count();
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60'000) return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
  return fmt::format("{}m{:02}s", ms / 60'000, (ms % 60'000) / 1000);
}

std::string iso8601(std::chrono::system_clock::time_point when, bool with_millis) {
  auto seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  if (!with_millis) return fmt::format("{}Z", text);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  return fmt::format("{}.{:03}Z", text, millis);
}

namespace {

// The number of `digits` digits at `text[at]`, or none.
std::optional<int> digits_at(std::string_view text, std::size_t at, std::size_t digits) {
  if (text.size() < at + digits) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text.data() + at, text.data() + at + digits, value);
  if (error != std::errc{} || end != text.data() + at + digits) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text) {
  using namespace std::chrono;
  // YYYY-MM-DDTHH:MM:SS[.mmm]Z
  if (text.size() != 20 && text.size() != 24) return std::nullopt;
  if (text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':' || text.back() != 'Z')
    return std::nullopt;
  auto y = digits_at(text, 0, 4), mo = digits_at(text, 5, 2), d = digits_at(text, 8, 2);
  auto h = digits_at(text, 11, 2), mi = digits_at(text, 14, 2), s = digits_at(text, 17, 2);
  std::optional<int> ms = 0;
  if (text.size() == 24) ms = text[19] == '.' ? digits_at(text, 20, 3) : std::nullopt;
  if (!y || !mo || !d || !h || !mi || !s || !ms || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
  year_month_day date{year(*y), month(static_cast<unsigned>(*mo)), day(static_cast<unsigned>(*d))};
  if (!date.ok()) return std::nullopt;
  return sys_days(date) + hours(*h) + minutes(*mi) + seconds(*s) + milliseconds(*ms);
}

}  // namespace zkverify
