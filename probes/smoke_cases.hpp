#pragma once
// The smoke suite's sessions (zkverify smoke): each case runs through the keeper seam and returns
// what it saw (every step's error, paths, ids, timings), never whether that is right:
// verifier/judge/smoke_judge decides. Everything is written under the plan's run path, which
// run_smoke removes at the end whatever happened (also after a stop request).

#include "probes/io.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/facts/smoke_facts.hpp"
#include "probes/keeper.hpp"
#include "probes/stop_signals.hpp"

namespace zkverify::probes {

struct SmokePlan {
  std::vector<ServerAddress> servers;             // the serving servers, in list order (at least one)
  std::string leader;                             // the leader's name: writes go through it; empty: the first server
  std::string namespace_path;                     // created if missing (its parent must exist)
  std::string run_path;                           // <namespace>/smoke-<host>-<pid>-<ms>: everything goes below it
  int ops = 10;                                   // latency: creates, sets, gets and deletes per server
  std::vector<std::string> client_paths;          // --clients: read after the cases (client_reads.hpp)
  std::chrono::milliseconds case_timeout{10000};  // each case's deadline (sessions, waits, closes)
  std::chrono::milliseconds session_timeout{10000};
  std::function<bool()> stop_requested;  // checked between cases; empty: never
  StopSignals* stop_signals = nullptr;   // their stop ends a wait for a watch's notice at once
};

// Runs every session case of the plan in order (skipping the rest once a stop is requested), then
// removes the run path. Returns by roughly cases x case_timeout.
SmokeObservations run_smoke(const SmokePlan& plan, KeeperFactory& keepers);

// The run path's name under `namespace_path`: smoke-<host>-<pid>-<unix ms>.
std::string smoke_run_path(const std::string& namespace_path);

}  // namespace zkverify::probes
