#pragma once
// The AdminServer's /commands/<name> over HTTP (Boost.Beast), as Asio coroutines.

#include <string>
#include <string_view>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>

#include "model/facts/facts.hpp"
#include "probes/probe_limits.hpp"

namespace zkverify::probes {

// GET http://host:port/commands/<command> (https:// with ProbeLimits::tls, admin.forceHttps) from
// `server` (its port the AdminServer's), connecting
// to the addresses its host resolved to; the body in Exchange::reply on HTTP 200. Any other status
// is ProbeError::http_error with the status in the detail.
boost::asio::awaitable<Exchange> fetch_admin_command(ServerAddress server,
                                                     std::vector<boost::asio::ip::address> addresses,
                                                     std::string command, ProbeLimits limits);

}  // namespace zkverify::probes
