#pragma once
// `zkverify order` and `zkverify safe-to-restart`: the restart plan of a rolling upgrade.

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "verifier/commands/ensemble.hpp"

namespace zkverify::verifier {

// Prints the order in which to restart the servers (text: one name per line). Exit 0, or 64.
int run_order(const EnsembleOptions& options, std::ostream& out, std::ostream& err);

struct SafeToRestartOptions : EnsembleOptions {
  std::string name;                        // the server to restart
  std::optional<std::string> state_file;   // --state FILE: remembers this round's restarts
};

// Exit 0 when restarting `name` now is safe (recorded in the ledger's restart round with --state),
// 1 when not (the reason on stdout), 64 when `name` is not listed or the options are bad.
int run_safe_to_restart(const SafeToRestartOptions& options, std::ostream& out, std::ostream& err);

// The servers this restart round approved, from the ledger (empty without one).
std::set<std::string> restarted_this_round(const std::optional<std::string>& state_file, std::chrono::milliseconds wait);
// Records `name` as approved in the ledger's restart round (a round ends once every server was).
void record_restart(const std::string& state_file, const std::string& name, const std::vector<ServerRow>& servers,
                    std::chrono::milliseconds wait);

}  // namespace zkverify::verifier
