// mntr replies (parse_mntr, and the sidecar's parse_peer_state): tab-separated lines from a peer.
#include <string>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "model/judge/readiness.hpp"
#include "model/parse/parsers.hpp"

using namespace zkverify;

namespace {

// The facts in mntr's own form; a trailing zk_version line keeps it from reading as a one-line refusal.
std::string mntr_text(const MntrFacts& facts) {
  std::string text = fmt::format("zk_server_state\t{}\n", facts.server_state);
  auto add = [&text](const char* key, const std::optional<std::int64_t>& value) {
    if (value) text += fmt::format("{}\t{}\n", key, *value);
  };
  add("zk_znode_count", facts.znode_count);
  add("zk_synced_followers", facts.synced_followers);
  add("zk_learners", facts.learners);
  add("zk_quorum_size", facts.quorum_size);
  return text + "zk_version\t3.8.0\n";
}

// zk_peer_state's value is one line, less one '\r' before its '\n'; as the only line of a reply,
// ended "\r\n", it reads the same.
void check_peer_state(std::string_view reply) {
  auto state = zkverify::parse_peer_state(reply);
  if (!state) return;
  FUZZ_CHECK(state->find('\n') == std::string::npos);
  FUZZ_CHECK(zkverify::parse_peer_state(fmt::format("zk_peer_state\t{}\r\n", *state)) == state);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto mntr = parse_mntr(fuzz::text_of(data, size));
  if (mntr.ok()) {
    FUZZ_CHECK(!mntr.facts.server_state.empty());
    auto again = parse_mntr(mntr_text(mntr.facts));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again.facts.server_state == mntr.facts.server_state);
    FUZZ_CHECK(again.facts.znode_count == mntr.facts.znode_count);
    FUZZ_CHECK(again.facts.synced_followers == mntr.facts.synced_followers);
    FUZZ_CHECK(again.facts.learners == mntr.facts.learners);
    FUZZ_CHECK(again.facts.quorum_size == mntr.facts.quorum_size);
  } else if (mntr.error == ProbeError::malformed) {
    FUZZ_CHECK(fuzz::printable_ascii(mntr.detail));
  }
  check_peer_state(fuzz::text_of(data, size));
  return 0;
}
