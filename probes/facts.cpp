#include "probes/facts.hpp"

#include <fmt/format.h>

#include "probes/parsers.hpp"

namespace zkverify::probes {

std::string zxid_hex(Zxid zxid) { return fmt::format("{:#x}", zxid.value); }

std::string describe(const Exchange& exchange) {
  switch (exchange.error) {
    case TransportError::none: return "ok";
    case TransportError::resolve_failed: return fmt::format("cannot resolve host: {}", exchange.detail);
    case TransportError::connect_refused: return "connection refused";
    case TransportError::connect_timeout: return "no TCP connection within the deadline";
    case TransportError::read_timeout:
      return exchange.reply.empty() ? "connected, but no reply within the deadline"
                                    : fmt::format("reply did not end within the deadline ({} bytes so far: \"{}\")",
                                                  exchange.reply.size(), excerpt(exchange.reply, 30));
    case TransportError::reset: return fmt::format("connection failed: {}", exchange.detail);
    case TransportError::reply_too_large: return exchange.detail;
    case TransportError::http_error: return exchange.detail;
  }
  return "unknown error";
}

}  // namespace zkverify::probes
