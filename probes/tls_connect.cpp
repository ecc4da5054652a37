#include "probes/tls_connect.hpp"

#include <memory>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

#include "probes/tcp.hpp"

namespace zkverify::probes::tls {

namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

void record(const TlsOutcome& outcome, Exchange& exchange) {
  exchange.error = ProbeError::tls_failed;
  exchange.tls_failure = outcome.failure;
  exchange.detail = outcome.detail;
}

}  // namespace

asio::awaitable<bool> connect(Stream& stream, const TlsClient& client, const std::string& host,
                              std::vector<asio::ip::address> addresses, std::uint16_t port, const ProbeLimits& limits,
                              Exchange& exchange) {
  auto& tcp_layer = beast::get_lowest_layer(stream);
  if (!co_await tcp::connect(tcp_layer, std::move(addresses), port, limits, exchange)) co_return false;
  // The handshake's last flight and the first request are small writes in a row: without this, Nagle
  // holds the second for the peer's delayed ACK (40 ms each on Linux).
  boost::system::error_code ignored;
  tcp_layer.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
  auto notes = std::make_shared<HandshakeNotes>();
  prepare_handshake(stream, client, host, port, notes);
  boost::system::error_code error;
  tcp_layer.expires_at(tcp::deadline_after(limits.exchange_timeout, limits));
  co_await stream.async_handshake(asio::ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, error));
  exchange.certificate = notes->certificate ? notes->certificate : peer_certificate_of(stream.native_handle());
  exchange.tls_resumed = !error && SSL_session_reused(stream.native_handle()) == 1;
  if (exchange.tls_resumed) keep_renewed_session(stream.native_handle());
  if (!error) {
    exchange.secured = Clock::now();
    co_return true;
  }
  if (error == beast::error::timeout)
    record({TlsFailure::handshake_stalled, "connected, but the TLS handshake did not end within the deadline"},
           exchange);
  else record(explain_tls_error(error, *notes, client.presents_certificate(), true), exchange);
  co_return false;
}

void record_io_error(const boost::system::error_code& error, const TlsClient& client, Exchange& exchange) {
  if (error.category() != asio::error::get_ssl_category()) return tcp::record_io_error(error, exchange);
  record(explain_tls_error(error, HandshakeNotes{}, client.presents_certificate(), false), exchange);
}

bool is_end_of_reply(const boost::system::error_code& error) {
  return error == asio::error::eof || error == asio::ssl::error::stream_truncated;
}

asio::awaitable<bool> speaks_tls(std::vector<asio::ip::address> addresses, std::uint16_t port,
                                 const ProbeLimits& limits) {
  Stream stream(co_await asio::this_coro::executor, sniffing_context());
  Exchange ignored;
  auto& tcp_layer = beast::get_lowest_layer(stream);
  if (!co_await tcp::connect(tcp_layer, std::move(addresses), port, limits, ignored)) co_return false;
  boost::system::error_code error;
  tcp_layer.expires_at(tcp::deadline_after(limits.exchange_timeout, limits));
  co_await stream.async_handshake(asio::ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, error));
  if (!error) co_return true;
  if (error.category() != asio::error::get_ssl_category()) co_return false;
  // The peer sent TLS records (an alert) unless OpenSSL found no TLS in what came back.
  int reason = ERR_GET_REASON(static_cast<unsigned long>(error.value()));
  co_return reason != SSL_R_WRONG_VERSION_NUMBER&& reason != SSL_R_UNEXPECTED_EOF_WHILE_READING&& reason !=
      SSL_R_PACKET_LENGTH_TOO_LONG&& reason != SSL_R_HTTP_REQUEST;
}

}  // namespace zkverify::probes::tls
