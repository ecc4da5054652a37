#pragma once
// The AdminServer's /commands/<name> over HTTP (Boost.Beast), as Asio coroutines.

#include "probes/io.hpp"
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "probes/facts.hpp"
#include "probes/four_letter.hpp"

namespace zkverify::probes {

// GET http://host:admin_port/commands/<command>; the body in Exchange::reply on HTTP 200.
// Any other status is ProbeError::http_error with the status in the detail.
boost::asio::awaitable<Exchange> fetch_admin_command(ServerAddress server, std::string command, ProbeLimits limits);

}  // namespace zkverify::probes
