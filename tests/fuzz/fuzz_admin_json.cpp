// The AdminServer's JSON bodies: /commands/monitor, /commands/configuration, /commands/voting_view,
// /commands/zabstate (the sidecar's). Every body goes through all four readers; what one accepts,
// written back as JSON, reads the same.
#include <set>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "model/judge/readiness.hpp"
#include "model/parse/parsers.hpp"

using namespace zkverify;
using nlohmann::json;

namespace {

void check_monitor(std::string_view body) {
  auto monitor = parse_admin_monitor(body);
  if (!monitor.ok()) return;
  json back{{"server_state", monitor.facts.server_state}};
  auto add = [&back](const char* key, const std::optional<std::int64_t>& value) {
    if (value) back[key] = *value;
  };
  add("znode_count", monitor.facts.znode_count);
  add("synced_followers", monitor.facts.synced_followers);
  add("learners", monitor.facts.learners);
  add("quorum_size", monitor.facts.quorum_size);
  auto again = parse_admin_monitor(back.dump());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again.facts.server_state == monitor.facts.server_state);
  FUZZ_CHECK(again.facts.znode_count == monitor.facts.znode_count);
  FUZZ_CHECK(again.facts.quorum_size == monitor.facts.quorum_size);
}

void check_voting_view(std::string_view body) {
  auto view = parse_admin_voting_view(body);
  if (!view.ok()) return;
  FUZZ_CHECK(view.facts.voters_only);
  json config = json::object();
  std::set<int> ids;
  for (const auto& member : view.facts.members) {
    if (!ids.insert(member.id).second) return;  // " 1" and "1" are one id: no single JSON object holds both
    config[std::to_string(member.id)] = {{"server_addresses", {member.quorum_address}},
                                         {"election_addresses", {member.election_address}},
                                         {"learner_type", member.role},
                                         {"client_address", member.client_address}};
  }
  auto again = parse_admin_voting_view(json{{"current_config", config}}.dump());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again.facts.members == view.facts.members);
}

// parse_zabstate reads the body's "zabstate" when it is a string, any string (the sidecar's check
// compares it with "broadcast"), and nothing else; as a phase it is the zabstate proof.
void check_zabstate(std::string_view body) {
  auto state = zkverify::parse_zabstate(body);
  auto phase = zkverify::zabstate_phase(body);
  FUZZ_CHECK(phase.has_value() == state.has_value());
  if (!state) return;
  auto parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(parsed.is_object() && parsed["zabstate"] == json(*state));
  FUZZ_CHECK(phase->source == zkverify::SyncProof::zabstate && phase->value == *state);
  FUZZ_CHECK(zkverify::parse_zabstate(json{{"zabstate", *state}, {"command", "zabstate"}}.dump()) == state);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto body = fuzz::text_of(data, size);
  check_monitor(body);
  auto conf = parse_admin_conf(body);
  if (conf.ok()) FUZZ_CHECK(conf.facts.server_id.has_value());
  check_voting_view(body);
  check_zabstate(body);
  return 0;
}
