#include "model/facts/text.hpp"

#include <fmt/format.h>

namespace zkverify {

std::string excerpt(std::string_view bytes, std::size_t limit) {
  std::string out;
  for (char c : bytes.substr(0, limit)) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u >= 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  if (bytes.size() > limit) out += fmt::format("... ({} bytes)", bytes.size());
  return out;
}

}  // namespace zkverify
