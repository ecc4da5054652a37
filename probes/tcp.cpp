#include "probes/tcp.hpp"

#include <algorithm>
#include <exception>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <fmt/format.h>

namespace zkverify::probes::tcp {

namespace asio = boost::asio;
namespace beast = boost::beast;

Clock::time_point deadline_after(std::chrono::milliseconds timeout, const ProbeLimits& limits) {
  return std::min(Clock::now() + timeout, limits.deadline);
}

Lookup::Lookup(asio::io_context& io, Resolver& resolver, std::string host, Clock::time_point deadline)
    : arrived_(io, asio::steady_timer::time_point::max()), result_(numeric_resolution(host)) {
  if (result_) return;  // nothing to look up: no thread
  thread_ = std::thread([this, &io, &resolver, host = std::move(host), deadline] {
    Resolution resolution;
    try {
      resolution = resolver.resolve(host, deadline);
    } catch (const std::exception& error) {  // e.g. no thread left to look up with: this server's failure
      resolution.error = fmt::format("lookup of {} failed: {}", host, error.what());
    }
    // Runs only while the io_context runs, which is within this Lookup's lifetime; once it has
    // stopped, the handler is destroyed with it, never run.
    asio::post(io, [this, resolution = std::move(resolution)]() mutable {
      result_ = std::move(resolution);
      arrived_.cancel();
    });
  });
}

Lookup::~Lookup() {
  if (thread_.joinable()) thread_.join();
}

asio::awaitable<Resolution> Lookup::result() {
  while (!result_) {
    boost::system::error_code cancelled;
    co_await arrived_.async_wait(asio::redirect_error(asio::use_awaitable, cancelled));
  }
  co_return *result_;
}

asio::awaitable<bool> connect(beast::tcp_stream& stream, std::vector<asio::ip::address> addresses, std::uint16_t port,
                              const ProbeLimits& limits, Exchange& exchange) {
  std::vector<asio::ip::tcp::endpoint> endpoints;
  for (const auto& address : addresses) endpoints.emplace_back(address, port);
  boost::system::error_code ec;
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

Exchange unresolved(const Resolution& resolution) {
  Exchange exchange;
  exchange.error = ProbeError::resolve_failed;
  exchange.detail = resolution.error;
  return exchange;
}

void record_io_error(const boost::system::error_code& ec, Exchange& exchange) {
  exchange.error = ec == beast::error::timeout ? ProbeError::read_timeout : ProbeError::reset;
  exchange.detail = ec.message();
}

}  // namespace zkverify::probes::tcp
