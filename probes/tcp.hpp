#pragma once
// Shared by the four-letter and AdminServer clients: connecting a Beast tcp_stream under a deadline
// and mapping socket errors to ProbeError. The stream's own timer closes the socket on expiry.

#include "probes/io.hpp"
#include <cstdint>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include "probes/facts.hpp"
#include "probes/four_letter.hpp"

namespace zkverify::probes::tcp {

// The earlier of `now + timeout` and the limits' overall deadline.
Clock::time_point deadline_after(std::chrono::milliseconds timeout, const ProbeLimits& limits);

// Resolves and connects; on failure sets exchange.error/detail and returns false.
boost::asio::awaitable<bool> connect(boost::beast::tcp_stream& stream, const std::string& host, std::uint16_t port,
                                     const ProbeLimits& limits, Exchange& exchange);

// Records a failed I/O step: timeouts become read_timeout, anything else reset.
void record_io_error(const boost::system::error_code& ec, Exchange& exchange);

}  // namespace zkverify::probes::tcp
