#pragma once
// `zkverify quorum`: probe every server, make the round trip, judge, compare with the ledger,
// render, and return the exit code; with --wait, until healthy --stable times in a row.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

#include "verifier/judge/checks.hpp"
#include "verifier/judge/ledger.hpp"

namespace zkverify::verifier {

inline constexpr int kExitUsage = 64;    // sysexits' EX_USAGE: bad flag, bad list, bad duration, bad state file
inline constexpr int kExitIoError = 74;  // sysexits' EX_IOERR: the state file could not be written

struct EnsembleOptions {  // what every command that looks at the ensemble takes
  std::string servers;                       // the --servers LIST
  std::chrono::milliseconds timeout{5000};   // one check, probes and round trip together
  std::string output = "text";               // text | json
  std::string namespace_path = "/zkverify";
  bool no_write = false;
  std::optional<std::string> admin_ports;    // --admin-port PORT or P1,P2,...
};

struct QuorumOptions : EnsembleOptions {
  std::optional<std::string> state_file;     // --state FILE: the ledger
  bool reset_state = false;                  // --reset-state: forget the ledger first
  std::optional<std::chrono::milliseconds> wait;  // --wait DURATION
  std::chrono::milliseconds interval{1000};  // --interval
  int stable = 3;                            // --stable N
};

// Checks the options; throws std::invalid_argument naming what is wrong.
void validate(const EnsembleOptions& options);
void validate(const QuorumOptions& options);
void validate_namespace(const std::string& path);

// What the durability marker needs from a round trip.
struct MarkerPlan {
  std::string path;
  std::optional<std::string> create_with;  // content, when the ledger has no marker yet
};

// Gathers the facts within options.timeout: probes first, then the round trip with what time is left.
EnsembleFacts gather(const EnsembleOptions& options, const std::optional<MarkerPlan>& marker = std::nullopt);

// One check: gather, judge; with a ledger, compare and return the ledger to store.
struct CheckResult {
  Report report;
  std::optional<Ledger> next_ledger;
};
CheckResult check_once(const QuorumOptions& options, const std::optional<Ledger>& ledger, bool use_ledger);

// One check under the state file's lock (when options.state_file): read the ledger (forgetting it
// first when reset_pending, which it then clears), check, store the new ledger.
Report check_and_record(const QuorumOptions& options, bool& reset_pending, std::ostream& err);

// The whole command; prints the report to `out`, progress and usage errors to `err`. Returns the exit code.
int run_quorum(const QuorumOptions& options, std::ostream& out, std::ostream& err);

// Renders per --output.
std::string render(const Report& report, const std::string& output);

// Now, as ISO 8601 UTC ("2026-11-30T15:04:05Z").
std::string iso_now();

}  // namespace zkverify::verifier
