// The --auth-file's text (parse_credentials), which holds a secret. Only std::invalid_argument may
// come out. A refusal's message is the same whatever USER and PASSWORD hold (the input masked two
// ways gives the same message), so it cannot quote them; credentials read, written back, read the same.
#include <optional>
#include <stdexcept>
#include <string>

#include "fuzz_check.hpp"
#include "model/facts/credentials.hpp"

using namespace zkverify;

namespace {

// The text with everything after the scheme (all of it when it has no ':') replaced by `fill`, but
// for the ':'s and the control characters (line ends among them): the same shape, none of the secret.
std::string masked(std::string_view text, char fill) {
  std::string shape(text);
  auto scheme_end = shape.find(':');
  for (auto i = scheme_end == std::string::npos ? 0 : scheme_end + 1; i < shape.size(); ++i) {
    auto byte = static_cast<unsigned char>(shape[i]);
    if (shape[i] != ':' && byte >= 0x20 && byte != 0x7f) shape[i] = fill;
  }
  return shape;
}

// The refusal's message, or none when the text was read.
std::optional<std::string> refusal_of(std::string_view text) {
  try {
    parse_credentials(text);
    return std::nullopt;
  } catch (const std::invalid_argument& error) {
    return std::string(error.what());
  }
}

void check_read(const Credentials& credentials) {
  FUZZ_CHECK(credentials.scheme == "digest");
  FUZZ_CHECK(!credentials.user.empty() && !credentials.password.empty());
  FUZZ_CHECK(credentials.user.find(':') == std::string::npos);
  FUZZ_CHECK(auth_data(credentials) == credentials.user + ':' + credentials.password);
  auto again = parse_credentials("digest:" + auth_data(credentials) + "\n");
  FUZZ_CHECK(again.user == credentials.user && again.password == credentials.password);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::text_of(data, size);
  auto refusal = refusal_of(text);
  auto refusal_x = refusal_of(masked(text, 'x'));
  auto refusal_q = refusal_of(masked(text, 'Q'));
  FUZZ_CHECK(refusal == refusal_x && refusal == refusal_q);
  if (!refusal) {
    check_read(parse_credentials(text));
    return 0;
  }
  // The message names what is wrong and the expected form; no two characters of a masked secret.
  FUZZ_CHECK(refusal->ends_with(" (expected one line: digest:USER:PASSWORD)"));
  FUZZ_CHECK(refusal->find("QQ") == std::string::npos);
  FUZZ_CHECK(fuzz::printable_ascii(*refusal));
  return 0;
}
