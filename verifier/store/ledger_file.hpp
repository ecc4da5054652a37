#pragma once
// The ledger in its state file: read, and changed, under the file's lock.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/judge/ledger.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

// The ledger in `state`, or none when there is no file yet. A file that is JSON but no ledger is
// Failure::state_unreadable, naming the path and the field.
std::optional<Ledger> read_ledger(const StateFile& state);

// Changes the ledger in `state_file` under its lock (waiting at most `wait` for it): reads it (an
// empty ledger when there is no file yet), applies `change`, stamps `now` (ISO 8601) and writes it.
void change_ledger(const std::string& state_file, std::chrono::milliseconds wait, const std::string& now,
                   const std::function<void(Ledger&)>& change);

}  // namespace zkverify::verifier
