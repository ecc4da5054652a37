#include "probes/tcp.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>
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

Lookup::State::State(const asio::any_io_executor& executor)
    : arrived(executor, asio::steady_timer::time_point::max()) {}

Lookup::Lookup(const asio::any_io_executor& executor, Resolver& resolver, std::string host, Clock::time_point deadline)
    : state_(std::make_shared<State>(executor)) {
  if (auto numeric = numeric_resolution(host)) {  // nothing to look up
    state_->result = std::move(*numeric);
    return;
  }
  resolve_all(executor, resolver, {std::move(host)}, deadline, [state = state_](std::vector<Resolution> found) {
    state->result = std::move(found.front());
    state->arrived.cancel();
  });
}

asio::awaitable<Resolution> Lookup::result() {
  while (!state_->result) {
    boost::system::error_code cancelled;
    co_await state_->arrived.async_wait(asio::redirect_error(asio::use_awaitable, cancelled));
  }
  co_return *state_->result;
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
  } else {
    exchange.connected = Clock::now();
    boost::system::error_code unknown;  // a socket reset since: the peer stays unknown
    auto peer = stream.socket().remote_endpoint(unknown);
    if (!unknown) exchange.peer = peer.address().to_string();
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
