#include "model/judge/sidecar_book.hpp"

#include <utility>

#include <fmt/format.h>

#include "model/judge/client_changes.hpp"
#include "model/judge/readiness.hpp"

namespace zkverify {

SidecarBook::SidecarBook(std::string local, std::chrono::milliseconds interval, std::chrono::milliseconds timeout,
                         Clock::time_point started, std::string ensemble)
    : interval_(interval), timeout_(timeout), last_cycle_end_(started) {
  status_.local = std::move(local);
  status_.ensemble = std::move(ensemble);
}

namespace {

// --clients: the registrations this cycle read against the last ones read, tallied by path. A
// registration gone is remembered: when it comes back under a new session, that session was lost.
// Each loss is a log line in its finding's words.
void follow_clients(SidecarStatus& status, const Report& report, std::vector<std::string>& changes) {
  if (!report.clients) return;
  LossContext context{"since the sidecar last saw it", servers_by_id(report.servers)};
  std::vector<Finding> findings;
  for (const auto& read : *report.clients) {
    if (read.error != ZkError::ok && read.error != ZkError::no_node) continue;
    auto& tally = status.clients[read.path];
    for (const auto& delta : compare_registrations(status.clients_seen, {read})) {
      if (delta.change == RegistrationChange::renewed) ++tally.renewed;
      if (delta.change == RegistrationChange::gone) {
        ++tally.gone;
        status.clients_departed[delta.path] = delta.before;
      }
      auto departed = status.clients_departed.find(delta.path);
      if (delta.change != RegistrationChange::added || departed == status.clients_departed.end()) continue;
      ClientPathRead then{read.path, ZkError::ok, {departed->second}, ""};
      ClientPathRead now{read.path, ZkError::ok, {delta.after}, ""};
      for (auto& finding : client_findings({then}, {now}, context)) {
        ++tally.renewed;
        findings.push_back(std::move(finding));
      }
      status.clients_departed.erase(departed);
    }
  }
  auto between = client_findings(status.clients_seen, *report.clients, context);
  findings.insert(findings.begin(), between.begin(), between.end());
  for (const auto& finding : findings)
    changes.push_back(fmt::format("{}: {}", to_string(finding.code), finding.message));
  remember_client_reads(status.clients_seen, *report.clients);
}

}  // namespace

std::vector<std::string> SidecarBook::cycle_ended(CycleResult result, Clock::time_point now) {
  auto& last = status_.last;
  auto changes = describe_changes(last ? &last->report : nullptr, last ? &last->readiness : nullptr, result.report,
                                  result.readiness);
  follow_clients(status_, result.report, changes);
  last = std::move(result);
  ++status_.cycles;
  last_cycle_end_ = now;
  return changes;
}

bool SidecarBook::alive(Clock::time_point now) const { return is_alive(last_cycle_end_, now, interval_, timeout_); }

}  // namespace zkverify
