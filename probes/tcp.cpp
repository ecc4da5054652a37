#include "probes/tcp.hpp"

#include <algorithm>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

namespace zkverify::probes::tcp {

namespace asio = boost::asio;
namespace beast = boost::beast;

Clock::time_point deadline_after(std::chrono::milliseconds timeout, const ProbeLimits& limits) {
  return std::min(Clock::now() + timeout, limits.deadline);
}

asio::awaitable<bool> connect(beast::tcp_stream& stream, const std::string& host, std::uint16_t port,
                              const ProbeLimits& limits, Exchange& exchange) {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(stream.get_executor());
  auto endpoints = co_await resolver.async_resolve(host, std::to_string(port), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    exchange.error = ProbeError::resolve_failed;
    exchange.detail = ec.message();
    co_return false;
  }
  stream.expires_at(deadline_after(limits.connect_timeout, limits));
  co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec == beast::error::timeout) {
    exchange.error = ProbeError::connect_timeout;
    exchange.detail = "no connection within the deadline";
  } else if (ec == asio::error::connection_refused) {
    exchange.error = ProbeError::connect_refused;
    exchange.detail = ec.message();
  } else if (ec) {
    exchange.error = ProbeError::reset;
    exchange.detail = ec.message();
  }
  co_return !ec;
}

void record_io_error(const boost::system::error_code& ec, Exchange& exchange) {
  exchange.error = ec == beast::error::timeout ? ProbeError::read_timeout : ProbeError::reset;
  exchange.detail = ec.message();
}

}  // namespace zkverify::probes::tcp
