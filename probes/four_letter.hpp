#pragma once
// Four-letter words and AdminServer commands, for every server in parallel, on the executor.
// Every lookup and every socket has a deadline; nothing outlives the overall deadline.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include "probes/io.hpp"

#include "model/facts/facts.hpp"
#include "probes/executor.hpp"
#include "probes/probe_limits.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes {

// Called with each server's probe on the probing strand, while other servers may still be probed;
// it must not block. With verdict_words_only as soon as its srvr exchange ended (srvr_exchange and
// srvr are final; its other words follow one connection at a time), otherwise once its probe is
// complete (its connections closed).
using ProbedCallback = std::function<void(const ServerProbe&)>;

// Probes each server: srvr, then (if srvr got an answer) the optional words, then the AdminServer
// when the address has an admin port. Servers are probed concurrently on the executor, their hosts
// looked up at once through `resolver` (by the connect deadline); each server holds at most one
// connection at a time, two with verdict_words_only (conf is asked beside srvr). `done` runs once,
// on the executor, with one ServerProbe per address in the same order, by the deadline (a server
// still being probed 200 ms after it is reported as it stands). Returns a function that ends the
// probing at once (a stop signal): `done` then runs with the probes as they stand, and the
// servers' exchanges end by their own deadlines.
std::function<void()> start_probe_servers(Executor& executor, const std::vector<ServerAddress>& servers,
                                          const ProbeLimits& limits, Resolver& resolver, ProbedCallback on_probed,
                                          std::function<void(std::vector<ServerProbe>)> done);

// start_probe_servers, awaited by the calling thread (never an executor thread).
std::vector<ServerProbe> probe_servers(Executor& executor, const std::vector<ServerAddress>& servers,
                                       const ProbeLimits& limits, Resolver& resolver = system_resolver(),
                                       ProbedCallback on_probed = nullptr);

// One four-letter word against one server (a building block of probe_servers, and its test seam),
// awaited by the calling thread.
Exchange ask_word(Executor& executor, const ServerAddress& server, std::string_view word, const ProbeLimits& limits,
                  Resolver& resolver = system_resolver());
// One AdminServer command (/commands/<command>) against `server`'s admin_port, which must be set.
Exchange ask_admin(Executor& executor, const ServerAddress& server, std::string_view command, const ProbeLimits& limits,
                   Resolver& resolver = system_resolver());

}  // namespace zkverify::probes
