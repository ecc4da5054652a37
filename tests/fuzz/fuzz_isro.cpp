// isro replies (parse_isro): "rw", "ro", "null", or a refusal; anything else is malformed.
#include "fuzz_check.hpp"
#include "model/facts/text.hpp"
#include "model/parse/parsers.hpp"

using namespace zkverify;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reply = fuzz::text_of(data, size);
  auto isro = parse_isro(reply);
  auto text = trim(reply);
  if (isro.ok()) {
    FUZZ_CHECK(text == "rw" || text == "ro");
    FUZZ_CHECK(isro.facts.read_only == (text == "ro"));
  } else if (isro.error == ProbeError::malformed) {
    FUZZ_CHECK(text != "rw" && text != "ro" && text != "null");
    FUZZ_CHECK(fuzz::printable_ascii(isro.detail));
  }
  return 0;
}
