#include "model/facts/facts.hpp"

#include <fmt/format.h>

#include "model/facts/text.hpp"

namespace zkverify {

std::string release_of(std::string_view srvr_version) {
  return std::string(srvr_version.substr(0, srvr_version.find_first_of("-, ")));
}

std::string zxid_hex(Zxid zxid) { return fmt::format("{:#x}", zxid.value); }

MemberIdentity identity_of(const Member& member) {
  return {member.id, member.quorum_address, member.election_address, member.role};
}

bool is_serving(Mode mode) { return is_serving_voter(mode) || mode == Mode::observer; }
bool is_serving_voter(Mode mode) { return mode == Mode::leader || mode == Mode::follower; }

std::optional<Mode> mode_of(const ServerProbe& probe) {
  if (has_facts(probe.srvr)) return probe.srvr->facts.mode;
  return std::nullopt;
}

std::vector<TimedStep> steps_of(const std::string& server, const std::string& what, const Exchange& exchange) {
  constexpr Clock::time_point never{};
  if (exchange.started == never || exchange.ended == never) return {};
  std::vector<TimedStep> steps;
  auto asked = exchange.started;
  if (exchange.connected != never) {
    steps.push_back({server, what + ": connect", exchange.started, exchange.connected});
    asked = exchange.connected;
  }
  if (exchange.secured != never) {
    auto handshake = exchange.tls_resumed ? ": TLS handshake (resumed)" : ": TLS handshake";
    steps.push_back({server, what + handshake, asked, exchange.secured});
    asked = exchange.secured;
  }
  steps.push_back({server, what, asked, exchange.ended});
  return steps;
}

std::string describe(const Exchange& exchange) {
  switch (exchange.error) {
    case ProbeError::ok: return "ok";
    case ProbeError::resolve_failed: return fmt::format("cannot resolve host: {}", exchange.detail);
    case ProbeError::connect_refused: return "connection refused";
    case ProbeError::connect_timeout: return "no TCP connection within the deadline";
    case ProbeError::read_timeout:
      return exchange.reply.empty() ? "connected, but no reply within the deadline"
                                    : fmt::format("reply did not end within the deadline ({} bytes so far: \"{}\")",
                                                  exchange.reply.size(), excerpt(exchange.reply, 30));
    case ProbeError::reset: return fmt::format("connection failed: {}", exchange.detail);
    case ProbeError::not_serving: return "not currently serving requests";
    case ProbeError::not_whitelisted: return "refused: not whitelisted";
    case ProbeError::reply_too_large:
    case ProbeError::http_error:
    case ProbeError::malformed: return exchange.detail;
    case ProbeError::tls_failed: return fmt::format("TLS: {}", exchange.detail);
  }
  return "unknown error";
}

}  // namespace zkverify
