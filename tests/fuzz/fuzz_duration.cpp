// DURATION flags (--timeout, --interval, ...: parse_duration). Only std::invalid_argument may come
// out; a parsed duration is positive, written back in milliseconds it parses the same, and it prints.
#include <stdexcept>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "model/facts/time_text.hpp"

using namespace zkverify;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::text_of(data, size);
  if (text.find('\0') != std::string_view::npos) return 0;  // a command-line argument holds no NUL
  std::chrono::milliseconds duration{};
  try {
    duration = parse_duration(text);
  } catch (const std::invalid_argument& error) {
    std::string_view what = error.what();
    FUZZ_CHECK(what.find("is not a duration") != what.npos || what.find("must be greater than 0") != what.npos ||
               what.find("is shorter than 1ms") != what.npos);
    return 0;
  }
  FUZZ_CHECK(duration.count() > 0);
  FUZZ_CHECK(parse_duration(fmt::format("{}ms", duration.count())) == duration);
  FUZZ_CHECK(!format_duration(duration).empty());
  return 0;
}
