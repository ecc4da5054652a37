#pragma once
// Four-letter words and AdminServer commands, for every server in parallel, on one io_context.
// Every lookup and every socket has a deadline; nothing outlives the overall deadline.

#include "probes/io.hpp"
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/facts.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes {

struct ProbeLimits {
  Clock::time_point deadline;                          // the whole probe phase ends here, whatever servers do
  std::chrono::milliseconds connect_timeout{1000};     // per connection, capped by `deadline`
  std::chrono::milliseconds exchange_timeout{2000};    // per request once connected, capped by `deadline`
  std::size_t max_reply_bytes = 512 * 1024;            // a flooding peer is cut off here
  bool srvr_only = false;                              // skip the optional words and the AdminServer
  // Ask only what can change a verdict (quorum's): conf beside srvr, then mntr where it counts; ruok
  // for a server that is not serving. Otherwise, after srvr, every optional word in kOptionalWords'
  // order.
  bool verdict_words_only = false;
};

// Probes each server: srvr, then (if srvr got an answer) the optional words, then the AdminServer
// when the address has an admin port. Servers are probed concurrently, their hosts looked up at
// once through `resolver` (by the connect deadline); each server holds at most one connection at a
// time, two with verdict_words_only (conf is asked beside srvr). Returns one ServerProbe per
// address, in the same order, by the deadline.
std::vector<ServerProbe> probe_servers(const std::vector<ServerAddress>& servers, const ProbeLimits& limits,
                                       Resolver& resolver = system_resolver());

// Called with each server's probe on the probing thread, while other servers may still be probed;
// it must not block. With verdict_words_only as soon as its srvr exchange ended (srvr_exchange and
// srvr are final; its other words follow one connection at a time), otherwise once its probe is
// complete (its connections closed).
using ProbedCallback = std::function<void(const ServerProbe&)>;
std::vector<ServerProbe> probe_servers(const std::vector<ServerAddress>& servers, const ProbeLimits& limits,
                                       Resolver& resolver, const ProbedCallback& on_probed);

// One four-letter word against one server (a building block of probe_servers, and its test seam).
Exchange ask_word(const ServerAddress& server, std::string_view word, const ProbeLimits& limits,
                  Resolver& resolver = system_resolver());
// One AdminServer command (/commands/<command>) against `server`'s admin_port, which must be set.
Exchange ask_admin(const ServerAddress& server, std::string_view command, const ProbeLimits& limits,
                   Resolver& resolver = system_resolver());

}  // namespace zkverify::probes
