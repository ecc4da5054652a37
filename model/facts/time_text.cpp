#include "model/facts/time_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace zkverify {

namespace {

// One unit of a Go duration, in nanoseconds; 0 when `unit` is none.
double nanoseconds_per(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  if (unit == "m") return 60e9;
  if (unit == "h") return 3600e9;
  if (unit == "d") return 86400e9;  // beyond Go's units: certificates are counted in days
  return 0;
}

// "1.5" of "1.5s": the number at the front of `rest`, which it consumes; none when there is none.
std::optional<double> take_number(std::string_view& rest) {
  std::size_t length = 0;
  bool digits = false;
  while (length < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[length])) != 0 || rest[length] == '.')) {
    digits = digits || rest[length] != '.';
    ++length;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + length, value, std::chars_format::fixed);
  if (!digits || ec != std::errc{} || end != rest.data() + length) return std::nullopt;
  rest.remove_prefix(length);
  return value;
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text) {
  auto fail = [&](std::string_view why) { return BadInput(fmt::format("'{}' {}", text, why)); };
  auto syntax = "is not a duration (use e.g. 250ms, 1.5s, 1m30s, 1h, 14d)";
  if (text.starts_with('-')) throw fail("must be greater than 0");
  if (text == "0" || text == "+0") throw fail("must be greater than 0");
  std::string_view rest = text.starts_with('+') ? text.substr(1) : text;
  if (rest.empty()) throw fail(syntax);
  double total_ns = 0;
  while (!rest.empty()) {
    auto value = take_number(rest);
    if (!value) throw fail(syntax);
    auto unit_length = rest.find_first_of("0123456789.");
    auto unit = rest.substr(0, unit_length);
    auto scale = nanoseconds_per(unit);
    if (scale == 0) throw fail(unit.empty() ? "is not a duration: give a unit (ms, s, m, h), e.g. 5s" : syntax);
    total_ns += *value * scale;
    rest.remove_prefix(unit.size());
  }
  if (total_ns <= 0) throw fail("must be greater than 0");
  auto whole_ms = std::llround(total_ns / 1e6);
  if (whole_ms == 0) throw fail("is shorter than 1ms");
  if (total_ns / 1e6 > static_cast<double>(std::int64_t{1} << 40))
    throw fail("is not a duration: too long");  // ~35 years
  return std::chrono::milliseconds(whole_ms);
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
