#include "model/facts/credentials.hpp"

#include <algorithm>
#include <stdexcept>

namespace zkverify {

namespace {

bool has_control_character(std::string_view text) {
  return std::ranges::any_of(text, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// The text without one trailing "\n", "\r\n" or "\r" (editors add them).
std::string_view without_line_end(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (text.ends_with('\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string auth_data(const Credentials& credentials) { return credentials.user + ':' + credentials.password; }

std::string describe(const SaslRefusal& refusal) {
  auto as = "SASL " + refusal.mechanism + (refusal.user.empty() ? std::string() : " as " + refusal.user);
  if (!refusal.by_server) return as + " with " + refusal.server + " failed: " + refusal.why;
  auto text = refusal.server + " refused " + as + ": " + refusal.why;
  if (refusal.mechanism == "GSSAPI") return text + ": a principal or ticket the servers do not accept";
  return text + ": a wrong password, or a user the servers' JAAS Server section does not list";
}

std::string parse_password(std::string_view text) {
  auto line = without_line_end(text);
  if (line.empty()) throw BadInput("is empty (expected one line: the password)");
  if (line.find_first_of("\r\n") != std::string_view::npos)
    throw BadInput("holds more than one line (expected the password alone)");
  if (has_control_character(line)) throw BadInput("holds a control character");
  return std::string(line);
}

Credentials parse_credentials(std::string_view text) {
  auto fail = [](std::string_view why) {
    return BadInput(std::string(why) + " (expected one line: digest:USER:PASSWORD)");
  };
  auto line = without_line_end(text);
  if (line.empty()) throw fail("is empty");
  if (line.find_first_of("\r\n") != std::string_view::npos) throw fail("holds more than one line");
  if (has_control_character(line)) throw fail("holds a control character");
  auto first = line.find(':');
  if (first == std::string_view::npos) throw fail("has no scheme: it must start with 'digest:'");
  // The scheme is only named when it is a known word: a file missing it starts with the user.
  if (line.substr(0, first) != "digest")
    throw fail("does not start with 'digest:' (the only scheme this client supports: it is built without SASL)");
  auto rest = line.substr(first + 1);
  auto second = rest.find(':');
  if (second == std::string_view::npos) throw fail("has no ':' between USER and PASSWORD");
  if (second == 0) throw fail("has an empty USER");
  if (second + 1 == rest.size()) throw fail("has an empty PASSWORD");
  return Credentials{"digest", std::string(rest.substr(0, second)), std::string(rest.substr(second + 1))};
}

}  // namespace zkverify
