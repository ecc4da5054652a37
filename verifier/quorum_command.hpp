#pragma once
// `zkverify quorum`: probe every server, make the round trip, judge, render, and return the exit code.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>

#include "verifier/checks.hpp"

namespace zkverify::verifier {

inline constexpr int kExitUsage = 64;  // sysexits' EX_USAGE: bad flag, bad list, bad duration

struct QuorumOptions {
  std::string servers;                       // the --servers LIST
  std::chrono::milliseconds timeout{5000};   // the whole run, probes and round trip together
  std::string output = "text";               // text | json
  std::string namespace_path = "/zkverify";
  bool no_write = false;
  std::optional<std::string> admin_ports;    // --admin-port PORT or P1,P2,...
};

// Checks the options; throws std::invalid_argument naming what is wrong.
void validate(const QuorumOptions& options);
void validate_namespace(const std::string& path);

// Gathers the facts within options.timeout: probes first, then the round trip with what time is left.
EnsembleFacts gather(const QuorumOptions& options);

// The whole command; prints the report to `out`, a usage error (one line) to `err`. Returns the exit code.
int run_quorum(const QuorumOptions& options, std::ostream& out, std::ostream& err);

}  // namespace zkverify::verifier
