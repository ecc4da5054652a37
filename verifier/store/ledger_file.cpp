#include "verifier/store/ledger_file.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace zkverify::verifier {

std::optional<Ledger> read_ledger(const StateFile& state) {
  auto json = state.read();
  if (!json) return std::nullopt;
  try {
    return ledger_from_json(*json);
  } catch (const std::invalid_argument& error) {
    throw Error(Failure::state_unreadable,
                fmt::format("state file {} is not a zkverify ledger: {}; fix it, or start over with --reset-state",
                            state.path().string(), error.what()));
  }
}

std::set<std::string> restarted_this_round(const StateFile& state) {
  auto ledger = read_ledger(state);
  return ledger ? ledger->restarted : std::set<std::string>{};
}

std::set<std::string> restarted_this_round(const std::optional<std::string>& state_file, std::chrono::milliseconds wait) {
  if (!state_file) return {};
  return restarted_this_round(StateFile(*state_file, wait));
}

void record_restart(const StateFile& state, const std::string& name, const std::vector<ServerRow>& servers,
                    const std::string& now) {
  Ledger next = read_ledger(state).value_or(Ledger{});
  next.restarted.insert(name);
  if (std::ranges::all_of(servers, [&](const ServerRow& row) { return next.restarted.contains(row.name); }))
    next.restarted.clear();
  next.updated = now;
  state.write(to_json(next));
}

void record_restart(const std::string& state_file, const std::string& name, const std::vector<ServerRow>& servers,
                    const std::string& now, std::chrono::milliseconds wait) {
  record_restart(StateFile(state_file, wait), name, servers, now);
}

}  // namespace zkverify::verifier
