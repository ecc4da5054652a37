#pragma once
// UTF-8 for text that quotes servers' bytes (a version in a finding, a state from mntr, a case's
// output in JUnit): what a server sends can be any bytes, and every output must stay valid UTF-8.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zkverify {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Decodes one UTF-8 character at `at`; its code point and length, or none for an invalid sequence
// (overlong forms, surrogates and values above U+10FFFF included).
inline std::optional<std::pair<char32_t, std::size_t>> decode_utf8(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[at + i]); };
  auto lead = byte(0);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || at + length > text.size()) return std::nullopt;
  if (length == 1) return std::pair{static_cast<char32_t>(lead), std::size_t{1}};
  char32_t point = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return std::nullopt;
    point = (point << 6) | (byte(i) & 0x3F);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (point < kSmallest[length] || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) return std::nullopt;
  return std::pair{point, length};
}

// `text` with every invalid byte replaced by U+FFFD (as json_text does for JSON).
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    auto decoded = decode_utf8(text, at);
    out += decoded ? text.substr(at, decoded->second) : kReplacementCharacter;
    at += decoded ? decoded->second : 1;
  }
  return out;
}

}  // namespace zkverify
