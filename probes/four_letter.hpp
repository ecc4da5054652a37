#pragma once
// Four-letter words and AdminServer commands, for every server in parallel, on one io_context.
// Every socket has a deadline that closes it; nothing outlives the overall deadline.

#include "probes/io.hpp"
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "probes/facts.hpp"

namespace zkverify::probes {

using Clock = std::chrono::steady_clock;

struct ProbeLimits {
  Clock::time_point deadline;                          // the whole probe phase ends here, whatever servers do
  std::chrono::milliseconds connect_timeout{1000};     // per connection, capped by `deadline`
  std::chrono::milliseconds exchange_timeout{2000};    // per request once connected, capped by `deadline`
  std::size_t max_reply_bytes = 512 * 1024;            // a flooding peer is cut off here
  bool srvr_only = false;                              // skip the optional words and the AdminServer
};

// Probes each server: srvr, then (if srvr got an answer) the optional words, then the AdminServer
// when the address has an admin port. Servers are probed concurrently; each holds at most one
// connection at a time. Returns one ServerProbe per address, in the same order.
std::vector<ServerProbe> probe_servers(const std::vector<ServerAddress>& servers, const ProbeLimits& limits);

// One four-letter word against one server (a building block of probe_servers, and its test seam).
Exchange ask_word(const ServerAddress& server, std::string_view word, const ProbeLimits& limits);

}  // namespace zkverify::probes
