#pragma once
// `zkverify step`: one manual step of a rolling upgrade, wrapped. Before: healthy and safe to restart
// NAME, or COMMAND is not run. During: the watch engine, and a poller timing NAME's downtime and the
// election. After: NAME serves and caught up, the ensemble is healthy for the stability window, the
// ledger holds, no session expired, no acknowledged write was lost.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "verifier/commands/ensemble.hpp"
#include "verifier/commands/watch.hpp"

namespace zkverify::verifier {

struct StepOptions {
  std::string servers;
  std::string restart;                       // NAME
  std::vector<std::string> command;          // after --
  std::chrono::milliseconds timeout{600000}; // for NAME and the ensemble to be healthy again
  std::chrono::milliseconds check_timeout{5000};
  std::optional<std::string> state_file;
  std::string output = "text";
  std::string namespace_path = "/zkverify";
  WatchTuning tuning;
  int stable = 3;
  std::chrono::milliseconds interval{1000};
};

// What the poller saw while the step ran.
struct StepTimeline {
  std::optional<std::chrono::milliseconds> downtime;  // NAME not serving, first to last
  std::optional<std::string> leader_before, leader_after;
  std::chrono::milliseconds longest_leaderless{0};    // the election, when the leader moved
};

int run_step(const StepOptions& options, std::ostream& out, std::ostream& err);

}  // namespace zkverify::verifier
