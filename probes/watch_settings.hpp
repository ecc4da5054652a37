#pragma once
// What a watch engine is asked to do (probes/watch_engine), and what its crew is made of
// (probes/watch_crew): the servers, the namespace, the pace and the timeouts.

#include <chrono>
#include <string>
#include <vector>

#include "model/facts/addresses.hpp"

namespace zkverify::probes {

struct WatchSettings {
  std::vector<ServerAddress> servers;
  std::string namespace_path = "/zkverify";
  double rate = 20;  // writes per second
  std::chrono::milliseconds session_timeout{10000};
  std::chrono::milliseconds request_timeout{3000};  // one read-back or cleanup step
  // At start, a run node another watch left behind is removed once no session node is left under it
  // and it is at least this old: a younger one may be a watch still creating its session nodes.
  std::chrono::milliseconds sweep_age{60000};
  // Each session's fallbacks: the servers listed after its own (false), or before it, nearest first
  // (true). A roll lists the servers in its order and fails over backwards, so a session whose server
  // restarts moves to one already restarted instead of the next, and displaced sessions never pile
  // up on one server (its maxClientCnxns) as the roll goes on.
  bool fail_over_backwards = false;
  // --clients: the registrations followed live (child watches, through a connected session of the
  // watch's), each change an event; none: not followed.
  std::vector<std::string> client_paths;
  // Keep every event for events() (roll's report); a watch that only prints them keeps none.
  bool keep_events = false;
};

}  // namespace zkverify::probes
