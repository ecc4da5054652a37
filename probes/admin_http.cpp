#include "probes/admin_http.hpp"

#include <fmt/format.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "probes/tcp.hpp"
#include "probes/tls_connect.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// GET /commands/<command> on a connected stream; the outcome in `exchange`, an I/O error through
// `record_error` (TCP's or TLS's).
template <class Stream, class RecordError>
asio::awaitable<void> request_command(Stream& stream, const ServerAddress& server, const std::string& command,
                                      const ProbeLimits& limits, Exchange& exchange, RecordError record_error) {
  boost::system::error_code ec;
  http::request<http::empty_body> request{http::verb::get, "/commands/" + command, 11};
  request.set(http::field::host, server.endpoint());
  request.set(http::field::user_agent, "zkverify/" ZKVERIFY_VERSION);
  request.set(http::field::connection, "close");
  beast::get_lowest_layer(stream).expires_at(tcp::deadline_after(limits.exchange_timeout, limits));
  co_await http::async_write(stream, request, asio::redirect_error(asio::use_awaitable, ec));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(limits.max_reply_bytes);
  // The header first, on its own: Beast 1.74's eager read (async_read's) takes a Content-Length body
  // over the limit whole when it arrives with the header, so the length is checked here.
  if (!ec) co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec && parser.content_length() && *parser.content_length() > limits.max_reply_bytes) ec = http::error::body_limit;
  if (!ec && !parser.is_done())
    co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec == http::error::body_limit) {
    exchange.error = ProbeError::reply_too_large;
    exchange.detail = fmt::format("reply exceeded {} bytes", limits.max_reply_bytes);
  } else if (ec) {
    record_error(ec, exchange);
  } else {
    auto& response = parser.get();
    exchange.reply = std::move(response.body());
    if (response.result() != http::status::ok) {
      exchange.error = ProbeError::http_error;
      exchange.detail = fmt::format("HTTP {}", response.result_int());
    }
  }
}

}  // namespace

asio::awaitable<Exchange> fetch_admin_command(ServerAddress server, std::vector<asio::ip::address> addresses,
                                              std::string command, ProbeLimits limits) {
  Exchange exchange;
  auto started = Clock::now();
  if (limits.tls) {
    tls::Stream stream(co_await asio::this_coro::executor, limits.tls->context());
    if (co_await tls::connect(stream, *limits.tls, server.host, std::move(addresses), server.port, limits, exchange)) {
      co_await request_command(stream, server, command, limits, exchange,
                               [&](const boost::system::error_code& ec, Exchange& failed) {
                                 tls::record_io_error(ec, *limits.tls, failed);
                               });
      keep_session_resumable(stream.native_handle());
    }
  } else {
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    if (co_await tcp::connect(stream, std::move(addresses), server.port, limits, exchange)) {
      co_await request_command(stream, server, command, limits, exchange, tcp::record_io_error);
      boost::system::error_code ignored;
      stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    }
  }
  exchange.started = started;
  exchange.ended = Clock::now();
  exchange.latency = std::chrono::duration_cast<std::chrono::microseconds>(exchange.ended - started);
  co_return exchange;
}

}  // namespace zkverify::probes
