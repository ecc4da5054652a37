// The judge of one restart step (model/judge/step): its own findings and the verdict step and roll
// share, from facts alone.

#include <algorithm>

#include <catch2/catch.hpp>

#include "model/judge/findings.hpp"
#include "model/judge/report.hpp"
#include "model/judge/step.hpp"

using namespace zkverify;

namespace {

StepFacts clean_step() {
  StepFacts step;
  step.server = "zoo-0";
  step.command = "kubectl delete pod zoo-0";
  step.timeout = std::chrono::minutes(10);
  step.stable = 3;
  step.restart_seen = true;
  step.healthy_streak = 3;
  return step;
}

// A last check whose one finding has `severity` (the verdict follows from the findings).
Report check_with(Severity severity) {
  Report report;
  auto finding = make_finding(FindingCode::unreachable, "zoo-1", "zoo-1 is unreachable");
  finding.severity = severity;
  report.findings.push_back(finding);
  return report;
}

std::vector<FindingCode> codes(const std::vector<Finding>& findings) {
  std::vector<FindingCode> out;
  for (const auto& finding : findings) out.push_back(finding.code);
  return out;
}

}  // namespace

TEST_CASE("step judge: a clean step has no finding of its own and its verdict is the last check's") {
  CHECK(step_findings(clean_step()).empty());
  Report healthy;
  healthy.verdict = Verdict::healthy;
  CHECK(step_verdict(healthy, {}, {}) == Verdict::healthy);
  CHECK(step_verdict(check_with(Severity::warning), {}, {}) == Verdict::degraded);
  CHECK(step_verdict(check_with(Severity::critical), {}, {}) == Verdict::critical);
}

TEST_CASE("step judge: --stable is counted in full: one healthy check short is not-recovered") {
  auto step = clean_step();
  step.healthy_streak = step.stable - 1;
  CHECK(codes(step_findings(step)) == std::vector{FindingCode::not_recovered});
  step.last_verdict = Verdict::critical;  // critical when the last check was
  CHECK(step_findings(step).front().severity == Severity::critical);
  step.healthy_streak = 0;
  step.last_verdict = Verdict::degraded;
  CHECK(step_findings(step).front().severity == Severity::warning);
}

TEST_CASE("step judge: COMMAND's failures and a restart never seen are the step's findings") {
  auto failed = clean_step();
  failed.command_status = 3;
  CHECK(codes(step_findings(failed)) == std::vector{FindingCode::command_failed});
  auto timed_out = clean_step();
  timed_out.timed_out = true;
  timed_out.command_status = 143;
  CHECK(codes(step_findings(timed_out)) == std::vector{FindingCode::command_timed_out});
  auto unseen = clean_step();
  unseen.restart_seen = false;
  CHECK(codes(step_findings(unseen)) == std::vector{FindingCode::not_restarted});
  auto interrupted = clean_step();
  interrupted.interrupted = true;
  CHECK(codes(step_findings(interrupted)) == std::vector{FindingCode::interrupted});
}

TEST_CASE("step judge: the step's and the watch's findings make a healthy check worse, never better") {
  Report healthy;
  healthy.verdict = Verdict::healthy;
  auto warning = make_finding(FindingCode::not_recovered, "zoo-0", "not healthy 3 times in a row");
  warning.severity = Severity::warning;
  auto critical = make_finding(FindingCode::session_expired, "zoo-0", "a session expired");
  critical.severity = Severity::critical;
  CHECK(step_verdict(healthy, {warning}, {}) == Verdict::degraded);
  CHECK(step_verdict(healthy, {}, {critical}) == Verdict::critical);
  CHECK(step_verdict(healthy, {warning}, {critical}) == Verdict::critical);
  CHECK(step_verdict(check_with(Severity::critical), {warning}, {}) == Verdict::critical);
}

TEST_CASE("step judge: a restarted server that never served again is named, with its release and its log") {
  auto step = clean_step();
  step.server = "pzoo-0";
  step.healthy_streak = 0;
  step.last_verdict = Verdict::degraded;
  step.version_before = "3.4.13";
  step.state_after = "unreachable: connection refused";
  auto findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector{FindingCode::not_recovered});
  CHECK(findings.front().message ==
        "pzoo-0, last seen on 3.4.13, does not serve since COMMAND (unreachable: connection refused): its own log says "
        "why (kubectl logs pzoo-0, or the server's zookeeper.out); the ensemble was not healthy 3 times in a row "
        "within 10m00s");
  step.state_after.clear();  // it serves: the ensemble is what did not recover
  CHECK(step_findings(step).front().message.starts_with("the ensemble was not healthy"));
}

TEST_CASE("step judge: where the restarted server's connections went, said as info", "[clients]") {
  auto step = clean_step();
  step.connections_moved = ConnectionsMoved{12, {{"pzoo-0", 9}, {"zoo-1", 3}}, std::chrono::milliseconds(1200), true};
  auto findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector{FindingCode::clients_moved});
  CHECK(findings[0].severity == Severity::info);
  CHECK(findings[0].server == "zoo-0");
  CHECK(findings[0].message ==
        "zoo-0's 12 client connections moved to 2 other servers within 1.2s of the first poll that found it not "
        "serving (pzoo-0 +9, zoo-1 +3; srvr's counts, zkverify's watch among them)");
  step.connections_moved = ConnectionsMoved{12, {{"pzoo-0", 4}}, std::chrono::milliseconds(500), false};
  CHECK(step_findings(step)[0].message ==
        "of zoo-0's 12 client connections, 4 were seen on other servers (pzoo-0 +4, 500ms after the first poll "
        "that found it not serving), and no more before it served again: the others waited for it, reconnected "
        "between polls, or closed");
  step.connections_moved = ConnectionsMoved{2, {{"pzoo-0", 1}}, std::chrono::milliseconds(500), false};
  CHECK_THAT(step_findings(step)[0].message,
             Catch::Matchers::StartsWith("of zoo-0's 2 client connections, 1 was seen"));
  step.connections_moved = ConnectionsMoved{0, {}, {}, true};  // no clients: nothing to say
  CHECK(step_findings(step).empty());
  CHECK(step_verdict(Report{}, step_findings(step), {}) == Verdict::healthy);
}

TEST_CASE("step judge: ephemerals that fell across the step are info, unknown or steady counts say nothing",
          "[clients]") {
  auto step = clean_step();
  step.ephemerals_on = "pzoo-1";
  step.ephemerals_before = 14;
  step.ephemerals_after = 11;
  auto findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector{FindingCode::ephemerals_fell});
  CHECK(findings[0].severity == Severity::info);
  CHECK(findings[0].message ==
        "the tree's ephemeral nodes fell from 14 to 11 during the step on zoo-0 (mntr on pzoo-1, before COMMAND and "
        "once the ensemble had recovered): the sessions that held 3 of them ended, or their clients deleted them");
  CHECK(step_verdict(Report{}, findings, {}) == Verdict::healthy);  // evidence, not a fault
  step.ephemerals_after = 14;
  CHECK(step_findings(step).empty());
  step.ephemerals_after = 15;  // a new client registered
  CHECK(step_findings(step).empty());
  step.ephemerals_after.reset();  // mntr not whitelisted, or no answer after
  CHECK(step_findings(step).empty());
}

TEST_CASE("step judge: before the leader's step, the sessions whose timeout the last election outlasted", "[clients]") {
  auto step = clean_step();
  step.server = "zoo-1";
  step.last_election = Election{5200, "pzoo-1", "2026-12-07T18:00:00Z"};
  auto at = [](std::int64_t session, int ms) {
    return ClientConnection{"127.0.0.1:1", session, std::chrono::milliseconds(ms)};
  };
  // Broker 9's 4 s session, listed by two servers (counted once); broker 1's 18 s; a short session no
  // registration names.
  step.cons_everywhere = {ConsFacts{{at(0x90, 4000), at(0x10, 18000)}}, ConsFacts{{at(0x90, 4000), at(0x77, 5200)}}};
  step.clients_before = std::vector<ClientPathRead>{
      {"/brokers/ids", ZkError::ok, {{"/brokers/ids/1", 0x10, 0, ""}, {"/brokers/ids/9", 0x90, 0, ""}}, ""}};
  auto findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector{FindingCode::election_outlasts_timeouts});
  CHECK(findings[0].severity == Severity::info);
  CHECK(findings[0].message ==
        "zoo-1, about to restart, leads: the last election a step saw (during the step on pzoo-1, "
        "2026-12-07T18:00:00Z) went 5.2s without a leader, and 2 of the 3 sessions the servers list have a "
        "timeout no longer: Kafka broker 9 (/brokers/ids/9) with session 0x90 (timeout 4.0s): a client "
        "disconnected for longer than its timeout is lost to libraries that say so (Curator, Pulsar's brokers), "
        "even where the server keeps its session");
  step.last_election = Election{3000, "pzoo-1", "then"};  // quicker than every timeout: nothing to say
  CHECK(step_findings(step).empty());
  step.last_election.reset();  // no election seen (no --state): nothing to weigh
  CHECK(step_findings(step).empty());
}
