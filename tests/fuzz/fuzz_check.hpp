#pragma once
// What every fuzz target shares: an invariant that fails aborts (libFuzzer then saves the input as
// crash-*), saying which one; and printable-text checks for what ends up in error messages.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Aborts with the failed condition and its place: a broken invariant is a crash to libFuzzer.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace fuzz {

// The fuzzer's bytes as text.
inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Only printable ASCII: what excerpt() promises for the bytes of a reply quoted in a message.
inline bool printable_ascii(std::string_view text) {
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

}  // namespace fuzz
