#pragma once
// What `zkverify watch` and `zkverify step` share: the watch engine's flags, its settings, and the
// stop signals.

#include <atomic>
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

// The engine's settings for these servers, namespace and flags.
probes::WatchSettings watch_settings(std::vector<ServerAddress> servers, const std::string& namespace_path,
                                     const WatchTuning& tuning);

// Set by SIGINT/SIGTERM once install_stop_signals() ran; g_stop_signal says which.
extern std::atomic<bool> g_stop_requested;
extern std::atomic<int> g_stop_signal;
// The second SIGINT/SIGTERM's number, 0 before it: roll stops its step only at the second.
extern std::atomic<int> g_second_stop_signal;
void install_stop_signals();

}  // namespace zkverify::verifier
