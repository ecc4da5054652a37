#include "verifier/commands/restart.hpp"

#include <ostream>
#include <ranges>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "verifier/judge/restart_plan.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

int run_order(const EnsembleOptions& options, std::ostream& out, std::ostream& err) {
  auto probing = options;
  probing.no_write = true;  // the order needs modes only
  Report report;
  try {
    validate(probing);
    report = judge(gather(probing));
  } catch (const std::invalid_argument& error) {
    err << "zkverify order: " << error.what() << "\n";
    return kExitUsage;
  }
  auto steps = restart_order(report);
  if (options.output == "json") {
    nlohmann::json json{{"order", nlohmann::json::array()}, {"servers", nlohmann::json::array()}};
    for (const auto& step : steps) {
      json["order"].push_back(step.name);
      json["servers"].push_back({{"name", step.name}, {"reason", step.reason}});
    }
    json["verdict"] = to_string(report.verdict);
    out << json.dump(2) << "\n";
  } else {
    for (const auto& step : steps) out << step.name << "\n";
  }
  if (report.verdict != Verdict::healthy)
    err << fmt::format("zkverify order: the ensemble is {} now; check it with zkverify quorum before restarting\n",
                       to_string(report.verdict));
  return 0;
}

namespace {

std::optional<Ledger> read_ledger(const StateFile& state) {
  auto json = state.read();
  if (!json) return std::nullopt;
  try {
    return ledger_from_json(*json);
  } catch (const std::invalid_argument& error) {
    throw StateFileError(fmt::format("state file {} is not a zkverify ledger: {}", state.path().string(), error.what()));
  }
}

}  // namespace

std::set<std::string> restarted_this_round(const std::optional<std::string>& state_file, std::chrono::milliseconds wait) {
  if (!state_file) return {};
  StateFile state(*state_file, wait);
  auto ledger = read_ledger(state);
  return ledger ? ledger->restarted : std::set<std::string>{};
}

void record_restart(const std::string& state_file, const std::string& name, const std::vector<ServerRow>& servers,
                    std::chrono::milliseconds wait) {
  StateFile state(state_file, wait);
  Ledger next = read_ledger(state).value_or(Ledger{});
  next.restarted.insert(name);
  if (std::ranges::all_of(servers, [&](const ServerRow& row) { return next.restarted.contains(row.name); }))
    next.restarted.clear();
  next.updated = iso_now();
  state.write(to_json(next));
}

int run_safe_to_restart(const SafeToRestartOptions& options, std::ostream& out, std::ostream& err) {
  RestartSafety safety;
  try {
    validate(options);
    auto servers = probes::parse_server_list(options.servers);
    if (std::ranges::find(servers, options.name, &probes::ServerAddress::name) == servers.end())
      throw std::invalid_argument(fmt::format("'{}' is not in --servers (names: {})", options.name,
                                              fmt::join(servers | std::views::transform(&probes::ServerAddress::name), ",")));
    auto restarted = restarted_this_round(options.state_file, options.timeout);
    auto report = judge(gather(options));
    safety = restart_safety(report, options.name, restarted);
    if (safety.safe && options.state_file) record_restart(*options.state_file, options.name, report.servers, options.timeout);
  } catch (const std::invalid_argument& error) {
    err << "zkverify safe-to-restart: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::runtime_error& error) {
    err << "zkverify safe-to-restart: " << error.what() << "\n";
    return kExitIoError;
  }
  if (options.output == "json")
    out << nlohmann::json{{"server", options.name}, {"safe", safety.safe}, {"reason", safety.reason}}.dump(2) << "\n";
  else
    out << (safety.safe ? "safe: " : "not safe: ") << safety.reason << "\n";
  return safety.safe ? 0 : 1;
}

}  // namespace zkverify::verifier
