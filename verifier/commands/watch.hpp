#pragma once
// What `zkverify watch`, `step` and `roll` share: the watch engine's flags and its settings.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "probes/watch_engine.hpp"

namespace zkverify::verifier {

struct WatchTuning {
  double rate = 20;                                  // writes per second
  std::chrono::milliseconds session_timeout{10000};  // asked of the servers
  std::optional<std::chrono::milliseconds> max_unavailable;
};

// --rate, --session-timeout, --max-unavailable.
void add_watch_tuning_options(CLI::App& command, WatchTuning& tuning);

// The engine's settings for these servers, namespace and flags, following `client_paths` (--clients).
probes::WatchSettings watch_settings(std::vector<ServerAddress> servers, const std::string& namespace_path,
                                     const WatchTuning& tuning, std::vector<std::string> client_paths);

}  // namespace zkverify::verifier
