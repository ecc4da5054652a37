// conf replies (parse_conf) and one membership line (parse_member_line).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "model/parse/parsers.hpp"

using namespace zkverify;

namespace {

// A member written back as its server.N line: host:quorumPort:electionPort:role[;client].
std::string member_line(const Member& member) {
  const auto& quorum = member.quorum_address;
  auto host_end = quorum.starts_with('[') ? quorum.find(']') : 0;
  auto host_length = quorum.find(':', host_end);
  auto election_port = member.election_address.substr(std::min(host_length + 1, member.election_address.size()));
  auto line = fmt::format("server.{}={}:{}:{}", member.id, quorum, election_port, member.role);
  if (!member.client_address.empty()) line += ";" + member.client_address;
  return line;
}

// Parsing a member's own line gives the member back.
void check_round_trip(const Member& member) {
  Member again;
  FUZZ_CHECK(parse_member_line(member_line(member), again));
  FUZZ_CHECK(again == member);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reply = fuzz::text_of(data, size);
  auto conf = parse_conf(reply);
  if (conf.ok()) {
    FUZZ_CHECK(reply.starts_with("clientPort="));
    FUZZ_CHECK(std::ranges::is_sorted(conf.facts.members, {}, &Member::id));
    for (const auto& member : conf.facts.members) check_round_trip(member);
  } else if (conf.error == ProbeError::malformed) {
    FUZZ_CHECK(fuzz::printable_ascii(conf.detail));
  }
  auto first_line = reply.substr(0, reply.find('\n'));
  Member member;
  if (parse_member_line(first_line, member)) {
    FUZZ_CHECK(first_line.starts_with("server."));
    FUZZ_CHECK(first_line.substr(first_line.find('=') + 1).starts_with(member.quorum_address));
    FUZZ_CHECK(!member.role.empty() || first_line.find(';') != std::string_view::npos || first_line.ends_with(':'));
    check_round_trip(member);
  }
  return 0;
}
