#include "model/judge/step.hpp"

#include <fmt/format.h>

#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/server_side.hpp"

namespace zkverify {

namespace {

// "pzoo-0, last seen on 3.4.13, does not serve since COMMAND (...): its own log says why; " when the
// restarted server itself never served again (a server that refuses its data directory exits).
std::string did_not_come_back(const StepFacts& step) {
  if (step.state_after.empty()) return "";
  return fmt::format(
      "{}{} does not serve since COMMAND ({}): its own log says why (kubectl logs {}, or the "
      "server's zookeeper.out); ",
      step.server, step.version_before.empty() ? "" : ", last seen on " + step.version_before + ",", step.state_after,
      step.server);
}

}  // namespace

std::vector<Finding> step_findings(const StepFacts& step) {
  std::vector<Finding> findings;
  auto bound = format_duration(step.timeout);
  if (step.timed_out)
    findings.push_back(
        make_finding(FindingCode::command_timed_out, step.server,
                     fmt::format("COMMAND ({}) was still running after --step-timeout {}: its process group "
                                 "got SIGTERM, then SIGKILL if it had not exited; it exited {}",
                                 step.command, bound, step.command_status)));
  else if (step.command_status != 0)
    findings.push_back(make_finding(FindingCode::command_failed, step.server,
                                    fmt::format("COMMAND exited {}{}", step.command_status,
                                                step.spawn_error.empty() ? "" : ": " + step.spawn_error)));
  if (step.interrupted)
    findings.push_back(make_finding(FindingCode::interrupted, step.server, "interrupted by a signal before the end"));
  else if (!step.timed_out && !step.restart_seen)
    findings.push_back(make_finding(
        FindingCode::not_restarted, step.server,
        fmt::format("{} was never seen down and its srvr Received count never fell within {}: COMMAND exited {} "
                    "without restarting it, or returned before it stopped (use a COMMAND that waits for the server "
                    "to stop)",
                    step.server, bound, step.command_status)));
  else if (!step.timed_out && step.healthy_streak < step.stable)
    findings.push_back({step.last_verdict == Verdict::critical ? Severity::critical : Severity::warning,
                        FindingCode::not_recovered, step.server,
                        fmt::format("{}the ensemble was not healthy {} in a row within {}", did_not_come_back(step),
                                    counted(step.stable, "time"), bound)});
  if (step.clients_before && step.clients_after) {
    LossContext context{fmt::format("during the step on {}", step.server),
                        step.servers_by_id,
                        step.server,
                        step.downtime,
                        step.longest_leaderless,
                        step.cons_before,
                        step.clients_seen};
    for (auto& finding : client_findings(*step.clients_before, *step.clients_after, context)) {
      finding.server = step.server;  // the step that cost it: roll's report says which
      findings.push_back(std::move(finding));
    }
  }
  // Last: the failures above come first in what roll says stopped it.
  if (step.clients_before && step.cons_before)
    if (auto held = clients_on_server(*step.clients_before, *step.cons_before, step.server))
      findings.push_back(std::move(*held));
  if (auto risk = election_risk(step.server, step.last_election, step.cons_everywhere, step.clients_before))
    findings.push_back(*risk);
  if (auto moved = connections_moved_finding(step.server, step.connections_moved)) findings.push_back(*moved);
  if (auto fell =
          ephemerals_fell_finding(step.server, step.ephemerals_before, step.ephemerals_after, step.ephemerals_on))
    findings.push_back(*fell);
  return findings;
}

Verdict step_verdict(const Report& last_check, const std::vector<Finding>& step_findings,
                     const std::vector<Finding>& watch_findings) {
  Report all = last_check;
  all.findings.insert(all.findings.end(), step_findings.begin(), step_findings.end());
  all.findings.insert(all.findings.end(), watch_findings.begin(), watch_findings.end());
  finalize(all);
  return all.verdict;
}

}  // namespace zkverify
