#include "model/render/roll_view.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/time_text.hpp"
#include "model/render/json_text.hpp"
#include "model/render/report_view.hpp"
#include "model/render/watch_view.hpp"

namespace zkverify {

using Json = nlohmann::json;
using std::chrono::milliseconds;

namespace {

Json findings_json(const std::vector<Finding>& findings) {
  Json out = Json::array();
  for (const auto& f : findings)
    out.push_back({{"severity", to_string(f.severity)},
                   {"code", to_string(f.code)},
                   {"server", f.server},
                   {"message", f.message}});
  return out;
}

std::string leader_text(const RollStep& step) {
  if (step.leader_before && step.leader_after && *step.leader_before != *step.leader_after)
    return fmt::format(
        "moved {} -> {} ({} without)", *step.leader_before, *step.leader_after,
        format_duration(milliseconds(step.leaderless ? step.leaderless->until_ms - step.leaderless->from_ms : 0)));
  return fmt::format("stayed {}", step.leader_after.value_or("-"));
}

std::string downtime_text(const RollStep& step) {
  return step.down ? format_duration(milliseconds(step.down->until_ms - step.down->from_ms)) : "-";
}

// "3.8.0 -> 3.9.3", "3.8.0" when it stayed, "-" when neither check said.
std::string version_text(const RollStep& step) {
  const auto& before = step.version_before.empty() ? std::string("?") : step.version_before;
  const auto& after = step.version_after.empty() ? std::string("?") : step.version_after;
  if (step.version_before.empty() && step.version_after.empty()) return "-";
  return before == after ? before : before + " -> " + after;
}

int leader_moves(const RollRecord& roll) {
  return static_cast<int>(std::ranges::count_if(roll.steps, [](const RollStep& step) {
    return step.leader_before && step.leader_after && *step.leader_before != *step.leader_after;
  }));
}

// "; 3 of 5 on 3.9.3, 2 on 3.8.0" while the servers run different releases, "; all 5 on 3.9.3" once a
// roll that changed a release left them on one; "" otherwise.
std::string versions_text(const RollRecord& roll) {
  std::map<std::string, int> count;
  for (const auto& [server, version] : roll.versions()) ++count[version];
  bool changed = std::ranges::any_of(roll.steps, [](const RollStep& step) {
    return !step.version_before.empty() && !step.version_after.empty() && step.version_before != step.version_after;
  });
  if (count.empty() || (count.size() == 1 && !changed)) return "";
  if (count.size() == 1) return fmt::format("; all {} on {}", count.begin()->second, count.begin()->first);
  std::vector<std::pair<std::string, int>> by_count(count.begin(), count.end());
  std::ranges::stable_sort(by_count, std::greater{}, &std::pair<std::string, int>::second);
  std::string text = fmt::format("; {} of {} on {}", by_count[0].second, roll.servers.size(), by_count[0].first);
  for (std::size_t i = 1; i < by_count.size(); ++i)
    text += fmt::format(", {} on {}", by_count[i].second, by_count[i].first);
  return text;
}

std::string totals_line(const RollRecord& roll) {
  return fmt::format(
      "roll: {}: {} restarted, {} skipped as done before, in {}; the leader moved {} time{}; sessions {} "
      "kept, {} expired; writes {} acknowledged, {} lost; longest write-unavailability {}{}",
      roll.complete ? "complete" : "stopped", roll.done().size(), roll.skipped.size(),
      format_duration(milliseconds(roll.duration_ms)), leader_moves(roll), leader_moves(roll) == 1 ? "" : "s",
      roll.totals.sessions - roll.totals.sessions_expired, roll.totals.sessions_expired, roll.totals.writes_acked,
      roll.totals.writes_lost, format_duration(roll.totals.longest_unavailable), versions_text(roll));
}

// What stopped the roll, and how to go on; empty when it completed.
std::string stop_text(const RollRecord& roll) {
  if (roll.complete) return "";
  std::string why;
  if (roll.refused) why = fmt::format("{} was not started: {}", roll.refused->server, roll.refused->reason);
  else if (roll.stopped_by_signal) why = "stopped by a signal between steps";
  else if (!roll.steps.empty()) {
    const auto& last = roll.steps.back();
    auto done = roll.done();
    bool restarted = std::ranges::find(done, last.server) != done.end();
    // What stopped it is its worst finding; info (where its clients' connections went) never does.
    auto worst = std::ranges::max_element(last.findings, {}, &Finding::severity);
    why = fmt::format(
        "the step of {} {}{}", last.server, restarted ? "cost clients their sessions" : "failed",
        worst == last.findings.end() ? "" : ": " + std::string(to_string(worst->code)) + ": " + worst->message);
  }
  return fmt::format(
      "roll stopped: {}. Done: {}. Left: {}. Run the same command again to resume: the servers done are "
      "skipped (the ledger's restart round) and the leader still goes last.\n",
      why, roll.done().empty() ? "none" : fmt::format("{}", fmt::join(roll.done(), ", ")),
      fmt::join(roll.remaining(), ", "));
}

}  // namespace

std::string render_roll_plan(const Report& report, const RollPlan& plan, OutputFormat output) {
  if (output == OutputFormat::json) {
    Json steps = Json::array();
    for (const auto& step : plan.steps)
      steps.push_back({{"server", step.server},
                       {"reason", step.reason},
                       {"safe", step.safety.safe},
                       {"safety", step.safety.reason}});
    return json_text({{"dry_run", true},
                      {"verdict", to_string(report.verdict)},
                      {"steps", steps},
                      {"skipped", plan.skipped},
                      {"report", to_json(report)}}) +
           "\n";
  }
  std::string text = render_text(report) + "\nroll --dry-run: the plan (nothing is run)\n";
  int n = 0;
  for (const auto& step : plan.steps)
    text += fmt::format("  {}. {:<10} {:<45} {}: {}\n", ++n, step.server, step.reason,
                        step.safety.safe ? "safe" : "NOT safe", step.safety.reason);
  if (!plan.skipped.empty())
    text += fmt::format("  skipped (done in this restart round): {}\n", fmt::join(plan.skipped, ", "));
  return text;
}

Json to_json(const RollRecord& roll) {
  Json steps = Json::array();
  for (const auto& step : roll.steps)
    steps.push_back(
        {{"server", step.server},
         {"command_status", step.command_status},
         {"downtime_ms", step.down ? Json(step.down->until_ms - step.down->from_ms) : Json(nullptr)},
         {"leader_before", step.leader_before.value_or("")},
         {"leader_after", step.leader_after.value_or("")},
         {"version_before", step.version_before.empty() ? Json(nullptr) : Json(step.version_before)},
         {"version_after", step.version_after.empty() ? Json(nullptr) : Json(step.version_after)},
         {"longest_leaderless_ms", step.leaderless ? step.leaderless->until_ms - step.leaderless->from_ms : 0},
         {"longest_unavailable_ms", step.longest_unavailable.count()},
         {"started_ms", step.span.from_ms},
         {"ended_ms", step.span.until_ms},
         {"verdict", to_string(step.verdict)},
         {"findings", findings_json(step.findings)},
         {"check_findings", findings_json(step.check_findings)},
         {"summary", step.summary}});
  return {{"verdict", to_string(roll_verdict(roll))},
          {"complete", roll.complete},
          {"stopped_by_signal", roll.stopped_by_signal},
          {"refused", roll.refused ? Json{{"server", roll.refused->server},
                                          {"reason", roll.refused->reason},
                                          {"report", to_json(roll.last_report)}}
                                   : Json(nullptr)},
          {"steps", steps},
          {"skipped", roll.skipped},
          {"done", roll.done()},
          {"remaining", roll.remaining()},
          {"leader_moves", leader_moves(roll)},
          {"duration_ms", roll.duration_ms},
          {"watch", to_json(roll.totals)},
          {"findings", findings_json(roll.watch_findings)},
          {"summary", totals_line(roll)}};
}

std::string render_roll(const RollRecord& roll, OutputFormat output) {
  if (output == OutputFormat::json) return json_text(to_json(roll)) + "\n";
  std::string text = fmt::format("\n{:<10} {:>7}  {:>8}  {:<40} {:<28}  {}\n", "SERVER", "COMMAND", "DOWN", "LEADER",
                                 "LONGEST WRITE-UNAVAILABILITY", "VERSION");
  for (const auto& step : roll.steps)
    text +=
        fmt::format("{:<10} {:>7}  {:>8}  {:<40} {:<28}  {}\n", step.server, step.command_status, downtime_text(step),
                    leader_text(step), format_duration(step.longest_unavailable), version_text(step));
  text += "\n" + totals_line(roll) + "\n" + stop_text(roll);
  std::vector<Finding> findings = roll.watch_findings;
  for (const auto& step : roll.steps) {
    findings.insert(findings.end(), step.findings.begin(), step.findings.end());
    findings.insert(findings.end(), step.check_findings.begin(), step.check_findings.end());
  }
  if (roll.refused && roll.last_report.verdict != Verdict::healthy)
    findings.insert(findings.end(), roll.last_report.findings.begin(), roll.last_report.findings.end());
  for (const auto& f : findings)
    text += fmt::format("  {:<9} {:<20} {}{}\n", to_string(f.severity), to_string(f.code),
                        f.server.empty() ? "" : f.server + ": ", f.message);
  return text;
}

}  // namespace zkverify
