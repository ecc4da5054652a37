// srvr and stat replies (parse_srvr), and ruok's (parse_ruok): any bytes a peer may send.
#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "model/parse/parsers.hpp"

using namespace zkverify;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reply = fuzz::text_of(data, size);
  auto srvr = parse_srvr(reply);
  if (srvr.ok()) {
    FUZZ_CHECK(srvr.detail.empty());
    FUZZ_CHECK(srvr.facts.mode != Mode::unknown);
    // The facts written back in srvr's own form parse to the same facts.
    auto again =
        parse_srvr(fmt::format("Zookeeper version: {}\nZxid: 0x{:x}\nMode: {}\nNode count: {}\n", srvr.facts.version,
                               srvr.facts.zxid.value, to_string(srvr.facts.mode), srvr.facts.node_count));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again.facts.zxid == srvr.facts.zxid);
    FUZZ_CHECK(again.facts.mode == srvr.facts.mode);
    FUZZ_CHECK(again.facts.node_count == srvr.facts.node_count);
  } else if (srvr.error == ProbeError::malformed) {
    FUZZ_CHECK(!srvr.detail.empty());
    FUZZ_CHECK(fuzz::printable_ascii(srvr.detail));  // the reply is quoted escaped, never raw
  }
  auto ruok = parse_ruok(reply);
  if (ruok.ok()) FUZZ_CHECK(ruok.facts.imok);
  if (ruok.error == ProbeError::malformed) FUZZ_CHECK(fuzz::printable_ascii(ruok.detail));
  return 0;
}
