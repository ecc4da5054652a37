#include "probes/word_exchange.hpp"

#include <fmt/format.h>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "probes/tcp.hpp"
#include "probes/tls_connect.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;

namespace {

// Sends the word and reads until the server closes; the error that ended it (eof: the reply is whole).
template <class Stream>
awaitable<boost::system::error_code> send_and_read(Stream& stream, const std::string& word, const ProbeLimits& limits,
                                                   Exchange& exchange) {
  boost::system::error_code ec;
  beast::get_lowest_layer(stream).expires_at(tcp::deadline_after(limits.exchange_timeout, limits));
  co_await asio::async_write(stream, asio::buffer(word), asio::redirect_error(asio::use_awaitable, ec));
  char chunk[4096];
  while (!ec) {
    auto n = co_await stream.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    exchange.reply.append(chunk, n);
    if (exchange.reply.size() > limits.max_reply_bytes) {
      exchange.error = ProbeError::reply_too_large;
      exchange.detail = fmt::format("reply exceeded {} bytes", limits.max_reply_bytes);
      co_return boost::system::error_code{};
    }
  }
  co_return ec;
}

awaitable<Exchange> plain_exchange(const WordTarget& target, const std::string& word, const ProbeLimits& limits) {
  Exchange exchange;
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  if (co_await tcp::connect(stream, target.addresses, target.port, limits, exchange)) {
    auto ec = co_await send_and_read(stream, word, limits, exchange);
    if (ec && ec != asio::error::eof) tcp::record_io_error(ec, exchange);
  }
  co_return exchange;
}

awaitable<Exchange> tls_exchange(const WordTarget& target, const std::string& word, const ProbeLimits& limits) {
  Exchange exchange;
  tls::Stream stream(co_await asio::this_coro::executor, limits.tls->context());
  if (co_await tls::connect(stream, *limits.tls, target.host, target.addresses, target.port, limits, exchange)) {
    auto ec = co_await send_and_read(stream, word, limits, exchange);
    if (ec && !tls::is_end_of_reply(ec)) tls::record_io_error(ec, *limits.tls, exchange);
    // The server's close_notify answered with ours: a connection ended without it makes the JDK drop
    // the TLS session, and the next handshake could not resume it. Bounded by the same deadline.
    if (ec == asio::error::eof) {
      boost::system::error_code ignored;
      co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ignored));
    }
    keep_session_resumable(stream.native_handle());
  }
  co_return exchange;
}

void say_port_speaks_tls(Exchange& exchange) {
  exchange.error = ProbeError::tls_failed;
  exchange.tls_failure = TlsFailure::port_speaks_tls;
  exchange.detail =
      "this port speaks TLS: give --tls-ca (and --tls-cert and --tls-key if the ensemble asks for a client "
      "certificate)";
}

}  // namespace

awaitable<Exchange> exchange_word(WordTarget target, std::string word, ProbeLimits limits) {
  auto started = Clock::now();
  Exchange exchange;
  if (!limits.tls && word == "srvr") {
    // A TLS port says nothing to "srvr" (Netty waits for a fifth byte): srvr gets three quarters of
    // the time, and when nothing came back, the last quarter asks whether the port speaks TLS.
    auto first = limits;
    first.deadline = started + (limits.deadline - started) * 3 / 4;
    first.exchange_timeout = limits.exchange_timeout * 3 / 4;
    exchange = co_await plain_exchange(target, word, first);
    // Only a silence: a TLS port never closes on four bytes, while a server over maxClientCnxns does.
    if (exchange.error == ProbeError::read_timeout && exchange.reply.empty()) {
      bool tls_port = co_await tls::speaks_tls(target.addresses, target.port, limits);  // not in a condition: GCC 12
      if (tls_port) say_port_speaks_tls(exchange);
    }
  } else if (!limits.tls) {
    exchange = co_await plain_exchange(target, word, limits);
  } else {
    exchange = co_await tls_exchange(target, word, limits);
    if (exchange.tls_failure == TlsFailure::port_speaks_plain) {
      static const std::string srvr = "srvr";  // named: GCC 12 and coroutine temporaries
      auto plain = co_await plain_exchange(target, srvr, limits);
      if (plain.error == ProbeError::ok && !plain.reply.empty())
        exchange.detail =
            "this port speaks plain TCP, not TLS (it answered srvr in plain text): list the servers' "
            "secureClientPort, or leave out --tls-ca";
      else exchange.tls_failure = TlsFailure::other;  // it closed the handshake, and is no plain ZooKeeper port either
    }
  }
  exchange.started = started;
  exchange.ended = Clock::now();
  exchange.latency = std::chrono::duration_cast<std::chrono::microseconds>(exchange.ended - started);
  co_return exchange;
}

}  // namespace zkverify::probes
