#pragma once
// `zkverify watch`: client sessions and ordered writes running beside an upgrade; events as they
// happen, a summary at the end, and exit 0 only if no session expired, no acknowledged write was
// lost and no write-unavailability window exceeded --max-unavailable.

#include <atomic>
#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

#include "probes/watch_engine.hpp"
#include "verifier/commands/ensemble.hpp"
#include "verifier/judge/report.hpp"

namespace zkverify::verifier {

// The watch engine's flags, shared by watch and step.
struct WatchTuning {
  double rate = 20;                                  // writes per second
  std::chrono::milliseconds session_timeout{10000};  // asked of the servers
  std::optional<std::chrono::milliseconds> max_unavailable;
};

struct WatchOptions {
  std::string servers;
  std::optional<std::chrono::milliseconds> duration;  // until SIGINT/SIGTERM when unset
  std::string output = "text";
  std::string namespace_path = "/zkverify";
  WatchTuning tuning;
  std::chrono::milliseconds timeout{10000};  // to connect the sessions at the start
};

void validate(const WatchOptions& options);

// The engine's settings for these servers, namespace and flags.
probes::WatchSettings watch_settings(std::vector<probes::ServerAddress> servers, const std::string& namespace_path,
                                     const WatchTuning& tuning);
void validate(const WatchTuning& tuning);

// Pure: what the totals mean. Findings: session-expired, writes-lost, stale-read, ephemeral-lost,
// unavailable-too-long (critical); write failures and disconnects are not failures by themselves.
std::vector<Finding> judge_watch(const probes::WatchTotals& totals, std::optional<std::chrono::milliseconds> max_unavailable);

std::string render_event(const probes::WatchEvent& event, const std::string& output);
std::string render_watch_summary(const probes::WatchTotals& totals, const std::vector<Finding>& findings,
                                 const std::string& output);
nlohmann::json to_json(const probes::WatchTotals& totals);

// Set by SIGINT/SIGTERM while a watch runs.
extern std::atomic<bool> g_stop_requested;
void install_stop_signals();

int run_watch(const WatchOptions& options, std::ostream& out, std::ostream& err);

}  // namespace zkverify::verifier
