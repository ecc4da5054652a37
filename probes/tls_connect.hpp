#pragma once
// A TLS connection for one request (a four-letter word, an AdminServer command): TCP connect, then
// the handshake, both under the probe's deadlines, and TLS's failures recorded in the exchange.

#include <cstdint>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "model/facts/facts.hpp"
#include "probes/probe_limits.hpp"
#include "probes/tls.hpp"

namespace zkverify::probes::tls {

using Stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// Connects to the first of `addresses` that accepts and completes the handshake with `host`'s
// certificate verified, by the exchange timeout (a peer that stalls it costs that, no more). Keeps the
// server's certificate in the exchange, also when it failed verification. On failure sets the
// exchange's error (tls_failed with the reason, or TCP's) and returns false.
boost::asio::awaitable<bool> connect(Stream& stream, const TlsClient& client, const std::string& host,
                                     std::vector<boost::asio::ip::address> addresses, std::uint16_t port,
                                     const ProbeLimits& limits, Exchange& exchange);

// A read's or write's error after the handshake: a TLS alert (a TLS 1.3 server refuses a missing
// client certificate only after the handshake) becomes tls_failed with its reason; others are TCP's.
void record_io_error(const boost::system::error_code& error, const TlsClient& client, Exchange& exchange);

// Whether the read ended as a reply ends: the server closed, with or without TLS's close_notify.
bool is_end_of_reply(const boost::system::error_code& error);

// Whether `port` answers a TLS handshake (any TLS record: a ServerHello, or an alert), with a
// context that verifies nothing, by the connect and exchange timeouts: to tell a plain client
// that it met a TLS port.
boost::asio::awaitable<bool> speaks_tls(std::vector<boost::asio::ip::address> addresses, std::uint16_t port,
                                        const ProbeLimits& limits);

}  // namespace zkverify::probes::tls
