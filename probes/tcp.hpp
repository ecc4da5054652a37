#pragma once
// Shared by the four-letter and AdminServer clients: a host's lookup awaited by a coroutine,
// connecting a Beast tcp_stream under a deadline, and mapping socket errors to ProbeError. The
// stream's own timer closes the socket on expiry.

#include "probes/io.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include "model/facts/facts.hpp"
#include "probes/four_letter.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes::tcp {

// The earlier of `now + timeout` and the limits' overall deadline.
Clock::time_point deadline_after(std::chrono::milliseconds timeout, const ProbeLimits& limits);

// One host's lookup, started at construction on a thread of its own (so the lookups of all servers
// run at once) and awaited by that server's coroutine: a slow name delays only its own server. The
// result reaches the io_context's thread through a post, so the coroutine never blocks it. A
// numeric host needs neither: its result is there at once.
class Lookup {
 public:
  Lookup(boost::asio::io_context& io, Resolver& resolver, std::string host, Clock::time_point deadline);
  // Joins the thread, which returns by the deadline (Resolver::resolve's contract). Must run before
  // the io_context is destroyed: the thread posts to it.
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  // The resolution, once the lookup has ended; on the io_context's thread only.
  boost::asio::awaitable<Resolution> result();

 private:
  boost::asio::steady_timer arrived_;  // never expires: cancelled when the result arrives
  std::optional<Resolution> result_;   // touched on the io_context's thread only
  std::thread thread_;                 // a name's lookup; started once the members above are in place
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
