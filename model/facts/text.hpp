#pragma once
// Small string helpers the parsers and messages share.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace zkverify {

// `s` without leading and trailing spaces, tabs and line ends.
inline std::string_view trim(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The parts of `s` between separators, each trimmed; "" gives one empty part.
inline std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto at = s.find(separator);
    parts.push_back(trim(s.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

// "1 voter", "3 voters": a count with its noun in the right number (`plural` when not noun + "s").
inline std::string counted(long long count, std::string_view noun, std::string_view plural = "") {
  std::string text = std::to_string(count) + " ";
  if (count == 1) return text.append(noun);
  return plural.empty() ? text.append(noun).append("s") : text.append(plural);
}

// "was" or "were", for `count` things.
inline std::string_view was_or_were(long long count) { return count == 1 ? "was" : "were"; }

// A short, printable excerpt of a reply for error messages: control bytes escaped, long text cut.
std::string excerpt(std::string_view bytes, std::size_t limit = 60);

}  // namespace zkverify
