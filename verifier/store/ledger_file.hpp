#pragma once
// The ledger in its state file: read under the file's lock, the restart round's bookkeeping.

#include <chrono>
#include <functional>
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

// Changes the ledger in `state_file` under its lock (waiting at most `wait` for it): reads it (an
// empty ledger when there is no file yet), applies `change`, stamps `now` (ISO 8601) and writes it.
void change_ledger(const std::string& state_file, std::chrono::milliseconds wait, const std::string& now,
                   const std::function<void(Ledger&)>& change);

}  // namespace zkverify::verifier
