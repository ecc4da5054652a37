#pragma once
// The ledger in its state file: read under the file's lock, the restart round's bookkeeping.

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "verifier/judge/ledger.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

// The ledger in `state`, or none when there is no file yet. A file that is JSON but no ledger is
// Failure::state_unreadable, naming the path and the field.
std::optional<Ledger> read_ledger(const StateFile& state);

// The servers this restart round approved.
std::set<std::string> restarted_this_round(const StateFile& state);
// The same, taking the file's lock for the read only (empty without a state file).
std::set<std::string> restarted_this_round(const std::optional<std::string>& state_file, std::chrono::milliseconds wait);

// Records `name` as approved in the ledger's restart round; the round ends (is cleared) once every
// server was. `now` is an ISO 8601 time. Hold `state` from the read that decided to the record, so
// two approvals cannot interleave.
void record_restart(const StateFile& state, const std::string& name, const std::vector<ServerRow>& servers,
                    const std::string& now);
void record_restart(const std::string& state_file, const std::string& name, const std::vector<ServerRow>& servers,
                    const std::string& now, std::chrono::milliseconds wait);

}  // namespace zkverify::verifier
