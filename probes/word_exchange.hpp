#pragma once
// One four-letter word's exchange with one server, over plain TCP or TLS (ProbeLimits::tls): the
// word sent, the reply read until the server closes (a reply has no length or terminator).

#include <cstdint>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>

#include "model/facts/facts.hpp"
#include "probes/probe_limits.hpp"

namespace zkverify::probes {

// Where a word goes: `host` as listed (TLS checks the certificate against it) and the addresses it
// resolved to.
struct WordTarget {
  std::string host;
  std::vector<boost::asio::ip::address> addresses;
  std::uint16_t port = 0;
};

// Sends `word` and reads the reply by the limits' deadlines. Over plain TCP, a srvr that gets no
// reply at all (within three quarters of the time) is checked for a TLS port ("this port speaks TLS: give --tls-ca");
// over TLS, a handshake that finds plain TCP is checked with a plain srvr (and said so).
boost::asio::awaitable<Exchange> exchange_word(WordTarget target, std::string word, ProbeLimits limits);

}  // namespace zkverify::probes
