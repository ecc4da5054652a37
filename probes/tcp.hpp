#pragma once
// Shared by the four-letter and AdminServer clients: a host's lookup awaited by a coroutine,
// connecting a Beast tcp_stream under a deadline, and mapping socket errors to ProbeError. The
// stream's own timer closes the socket on expiry.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include "model/facts/facts.hpp"
#include "probes/probe_limits.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes::tcp {

// The earlier of `now + timeout` and the limits' overall deadline.
Clock::time_point deadline_after(std::chrono::milliseconds timeout, const ProbeLimits& limits);

// One host's lookup, started at construction (so the lookups of all servers run at once) and
// awaited by that server's coroutine: a slow name delays only its own server. Shared with the
// resolver's callback, which may come after the coroutine gave up.
class Lookup {
 public:
  // `executor`: the strand of the coroutine that awaits the result.
  Lookup(const boost::asio::any_io_executor& executor, Resolver& resolver, std::string host,
         Clock::time_point deadline);

  // The resolution, once the lookup has ended (by the deadline); on `executor` only.
  boost::asio::awaitable<Resolution> result();

 private:
  struct State {
    explicit State(const boost::asio::any_io_executor& executor);
    boost::asio::steady_timer arrived;  // never expires: cancelled when the result arrives
    std::optional<Resolution> result;   // touched on the executor only
  };
  std::shared_ptr<State> state_;
};

// Connects to the first of `addresses` (at `port`) that accepts, by the connect deadline; on
// failure sets exchange.error/detail and returns false.
boost::asio::awaitable<bool> connect(boost::beast::tcp_stream& stream, std::vector<boost::asio::ip::address> addresses,
                                     std::uint16_t port, const ProbeLimits& limits, Exchange& exchange);

// Records a failed lookup: resolve_failed, with the resolver's explanation.
Exchange unresolved(const Resolution& resolution);

// Records a failed I/O step: timeouts become read_timeout, anything else reset.
void record_io_error(const boost::system::error_code& ec, Exchange& exchange);

}  // namespace zkverify::probes::tcp
