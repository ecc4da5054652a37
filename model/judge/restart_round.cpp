#include "model/judge/restart_round.hpp"

#include <algorithm>
#include <iterator>

#include "model/facts/time_text.hpp"

namespace zkverify {

namespace {

bool expired(const Approval& approval, std::chrono::system_clock::time_point now) {
  auto approved = parse_iso8601(approval.approved);
  return !approved || now - *approved > kApprovalLease;  // an unreadable time cannot hold a lease
}

}  // namespace

std::set<std::string> going_down(const Ledger& ledger, const std::string& except,
                                 std::chrono::system_clock::time_point now) {
  std::set<std::string> names;
  for (const auto& [name, approval] : ledger.in_flight)
    if (name != except && !expired(approval, now)) names.insert(name);
  return names;
}

void approve_in_flight(Ledger& ledger, const Report& report, const std::string& name, const std::string& now) {
  auto row = std::ranges::find(report.servers, name, &ServerRow::name);
  ledger.in_flight[name] = Approval{now, false, row == report.servers.end() ? std::nullopt : row->packets_received};
}

void record_restarted(Ledger& ledger, const std::string& name, const std::vector<ServerRow>& servers) {
  ledger.in_flight.erase(name);
  ledger.restarted.insert(name);
  if (std::ranges::all_of(servers, [&](const ServerRow& row) { return ledger.restarted.contains(row.name); }))
    ledger.restarted.clear();
}

void follow_approvals(Ledger& ledger, const Report& report, const std::string& now) {
  auto when = parse_iso8601(now).value_or(std::chrono::system_clock::time_point{});
  for (auto it = ledger.in_flight.begin(); it != ledger.in_flight.end();) {
    auto& [name, approval] = *it;
    auto row = std::ranges::find(report.servers, name, &ServerRow::name);
    bool serving = row != report.servers.end() && is_serving(row->state);
    if (!serving) approval.seen_down = true;
    bool restarted =
        serving && approval.received && row->packets_received && *row->packets_received < *approval.received;
    bool done = expired(approval, when) || (serving && approval.seen_down) || restarted;
    it = done ? ledger.in_flight.erase(it) : std::next(it);
  }
}

}  // namespace zkverify
