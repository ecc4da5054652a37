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

// A short, printable excerpt of a reply for error messages: control bytes escaped, long text cut.
std::string excerpt(std::string_view bytes, std::size_t limit = 60);

}  // namespace zkverify
