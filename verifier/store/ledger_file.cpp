#include "verifier/store/ledger_file.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace zkverify::verifier {

std::optional<Ledger> read_ledger(const StateFile& state) {
  auto json = state.read();
  if (!json) return std::nullopt;
  try {
    return ledger_from_json(*json);
  } catch (const BadInput& error) {
    throw Error(Failure::state_unreadable,
                fmt::format("state file {} is not a zkverify ledger: {}; fix it, or start over with --reset-state",
                            state.path().string(), error.what()));
  }
}

void change_ledger(const std::string& state_file, std::chrono::milliseconds wait, const std::string& now,
                   const std::function<void(Ledger&)>& change) {
  StateFile state(state_file, wait);
  Ledger next = read_ledger(state).value_or(Ledger{});
  change(next);
  next.updated = now;
  state.write(to_json(next));
}

}  // namespace zkverify::verifier
