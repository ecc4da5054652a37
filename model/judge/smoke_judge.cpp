#include "model/judge/smoke_judge.hpp"
#include "model/facts/addresses.hpp"
#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/majority.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify {

namespace {
using std::chrono::microseconds;

double seconds_of(microseconds elapsed) { return static_cast<double>(elapsed.count()) / 1e6; }

// The messages of the findings with these codes, joined.
std::string findings_text(const Report& report, const std::vector<FindingCode>& codes) {
  std::vector<std::string> messages;
  for (const auto& finding : report.findings)
    if (std::ranges::find(codes, finding.code) != codes.end()) messages.push_back(finding.message);
  return fmt::format("{}", fmt::join(messages, "; "));
}

CaseResult passed(std::string id, std::string message = {}) {
  return {std::move(id), CaseOutcome::passed, std::move(message), {}, {}, {}, 0};
}
CaseResult failed(std::string id, std::string message, std::string detail = {}) {
  return {std::move(id), CaseOutcome::failed, std::move(message), std::move(detail), {}, {}, 0};
}

// An error, with the likely cause when it is one a deployment's settings give.
std::string explain(ZkError error) {
  if (error == ZkError::no_auth) return "no_auth (an ACL does not let zkverify write here)";
  if (error == ZkError::deadline_exceeded) return "deadline_exceeded (no answer within --timeout)";
  // The C client's own: no reply for two thirds of the session timeout, so it dropped the connection.
  if (error == ZkError::operation_timeout)
    return "operation_timeout (no reply within two thirds of the session timeout: the server, or this host, "
           "stalled)";
  return std::string(to_string(error));
}

std::string steps_text(const CaseRun& run) {
  std::string text;
  for (const auto& step : run.steps)
    text += fmt::format("{}{}: {}\n", step.what, step.server.empty() ? "" : " via " + step.server, explain(step.error));
  return text;
}

// The first step that did not succeed, as a failure; none when all did.
std::optional<CaseResult> failed_step(const std::string& id, const CaseRun& run) {
  for (const auto& step : run.steps)
    if (step.error != ZkError::ok)
      return failed(
          id, fmt::format("{}{}: {}", step.what, step.server.empty() ? "" : " via " + step.server, explain(step.error)),
          steps_text(run));
  return std::nullopt;
}

// Every session case's common ending: its time and detail; skipped when it did not run.
CaseResult finish(CaseResult result, const CaseRun& run) {
  if (!run.ran) return {result.id, CaseOutcome::skipped, "not run: stopped (SIGINT/SIGTERM) before it", {}, {}, {}, 0};
  result.seconds = seconds_of(run.elapsed);
  if (result.detail.empty()) result.detail = steps_text(run);
  return result;
}

// One listed server, standalone: a CI job's single container, its own leader and quorum.
bool lone_standalone(const Report& report) {
  return report.servers.size() == 1 && report.servers.front().state == ServerState::standalone;
}

bool serves(const Report& report, const ServerRow& row) { return is_serving(row.state) || lone_standalone(report); }

CaseResult server_serving(const Report& report, const ServerRow& row) {
  auto id = "server-serving/" + row.name;
  auto result = serves(report, row)
                    ? passed(id, fmt::format("{} serves as {}", row.name, to_string(row.state)))
                    : failed(id, fmt::format("{} is {}{}", server_label(row.name, row.address), to_string(row.state),
                                             row.error.empty() ? "" : ": " + row.error));
  if (row.latency_ms) result.seconds = *row.latency_ms / 1000.0;
  return result;
}

CaseResult single_leader(const Report& report) {
  if (lone_standalone(report)) return passed("single-leader", "the only server runs standalone: it leads itself");
  if (report.leader) return passed("single-leader", "leader " + *report.leader);
  auto why =
      findings_text(report, {FindingCode::no_leader, FindingCode::multiple_leaders, FindingCode::leader_unlisted});
  return failed("single-leader", why.empty() ? "no single listed server leads" : why);
}

CaseResult quorum(const Report& report) {
  if (lone_standalone(report)) return passed("quorum", "the only server runs standalone: it is its own quorum");
  auto figures = fmt::format("{}/{} voters serving", report.serving_voters, report.expected_voters);
  if (!has_finding(report.findings, FindingCode::no_quorum) &&
      report.serving_voters >= majority(report.expected_voters))
    return passed("quorum", figures);
  auto why = findings_text(report, {FindingCode::no_quorum});
  return failed("quorum", why.empty() ? "no quorum: " + figures : why);
}

// A listed server whose id is outside the membership (membership-unknown) is a misconfiguration too.
CaseResult membership(const Report& report) {
  // A change in progress (membership-changing) is safe for a gate, not a consistent membership.
  auto why = findings_text(
      report, {FindingCode::membership_mismatch, FindingCode::split_brain_possible, FindingCode::membership_changing,
               FindingCode::membership_unlisted, FindingCode::membership_unknown, FindingCode::duplicate_id,
               FindingCode::id_address_mismatch, FindingCode::config_behind});
  if (!why.empty()) return failed("membership-consistent", why);
  if (!report.membership_reported)
    return passed("membership-consistent",
                  "no server reported its membership (conf not whitelisted): nothing to compare");
  return passed("membership-consistent", "every server reports the same membership");
}

}  // namespace

std::vector<std::string> serving_servers(const Report& report) {
  std::vector<std::string> names;
  for (const auto& row : report.servers)
    if (serves(report, row)) names.push_back(row.name);
  return names;
}

bool ready_for_smoke(const Report& report) {
  return serving_servers(report).size() == report.servers.size() && (report.leader || lone_standalone(report));
}

std::vector<CaseResult> judge_ensemble(const Report& report) {
  std::vector<CaseResult> cases;
  for (const auto& row : report.servers) cases.push_back(server_serving(report, row));
  cases.push_back(single_leader(report));
  cases.push_back(quorum(report));
  cases.push_back(membership(report));
  return cases;
}

namespace {

CaseResult round_trip(const RoundTripSeen& seen) {
  const std::string id = "round-trip";
  if (auto step = failed_step(id, seen.run)) return *step;
  std::vector<std::string> bad;
  int ok = 0;
  for (const auto& read : seen.reads) {
    if (read.error != ZkError::ok) bad.push_back(fmt::format("{}: {}", read.server, explain(read.error)));
    else if (!read.bytes_match)
      bad.push_back(fmt::format("{}: read other bytes than written (stale read)", read.server));
    else ++ok;
  }
  auto figures = fmt::format("written via {}, read back after sync on {}/{}", seen.writer, ok, seen.reads.size());
  if (bad.empty()) return passed(id, figures);
  return failed(id, fmt::format("{}: {}", figures, fmt::join(bad, ", ")));
}

CaseResult ephemeral(const EphemeralSeen& seen) {
  const std::string id = "ephemeral-cleanup";
  if (auto step = failed_step(id, seen.run)) return *step;
  std::vector<std::string> still, unknown;
  for (const auto& lookup : seen.after_close) {
    if (lookup.error == ZkError::ok) still.push_back(lookup.server);
    else if (lookup.error != ZkError::no_node)
      unknown.push_back(fmt::format("{}: {}", lookup.server, explain(lookup.error)));
  }
  if (!still.empty())
    return failed(id, fmt::format("{} still exists on {} after its session (via {}) closed", seen.path,
                                  fmt::join(still, ", "), seen.creator));
  if (!unknown.empty())
    return failed(id, fmt::format("could not look for {} on {}", seen.path, fmt::join(unknown, ", ")));
  return passed(id, fmt::format("ephemeral created via {} gone on all {} servers after its session closed",
                                seen.creator, seen.after_close.size()));
}

CaseResult watch(const WatchSeen& seen) {
  const std::string id = "watch-fires";
  if (auto step = failed_step(id, seen.run)) return *step;
  if (!seen.notice)
    return failed(id, fmt::format("the data watch set via {} did not fire within {} ms of a write via {}", seen.watcher,
                                  seen.waited.count(), seen.writer));
  if (seen.notice->kind != WatchKind::changed)
    return failed(id, fmt::format("the data watch set via {} reported {} instead of a change", seen.watcher,
                                  seen.notice->kind == WatchKind::session_lost ? "a lost session" : "another event"));
  auto delay_ms = seen.delay ? static_cast<double>(seen.delay->count()) / 1000.0 : 0.0;
  auto result = passed(id, fmt::format("the watch set via {} fired {:.1f} ms after the write via {} was acknowledged",
                                       seen.watcher, delay_ms, seen.writer));
  result.properties.emplace_back("watch_delay_ms", fmt::format("{:.3f}", delay_ms));
  return result;
}

CaseResult sequential(const SequentialSeen& seen) {
  const std::string id = "sequential-order";
  if (auto step = failed_step(id, seen.run)) return *step;
  std::vector<std::pair<Zxid, long long>> order;
  std::set<long long> distinct;
  for (const auto& create : seen.creates) {
    if (create.error != ZkError::ok)
      return failed(id, fmt::format("create via {}: {}", create.server, explain(create.error)));
    auto number = sequence_number(create.path);
    if (!number) return failed(id, fmt::format("{} (via {}) has no sequence number", create.path, create.server));
    if (!distinct.insert(*number).second)
      return failed(id, fmt::format("sequence number {} was given twice (again via {})", *number, create.server));
    order.emplace_back(create.czxid, *number);
  }
  std::ranges::sort(order);
  for (std::size_t i = 1; i < order.size(); ++i)
    if (order[i].second < order[i - 1].second)
      return failed(id,
                    fmt::format("sequence {} was created after {} (zxid {} > {}) but numbered lower", order[i].second,
                                order[i - 1].second, zxid_hex(order[i].first), zxid_hex(order[i - 1].first)));
  return passed(
      id, fmt::format("{} children created concurrently got distinct sequence numbers, increasing in commit order",
                      seen.creates.size()));
}

CaseResult multi(const MultiSeen& seen) {
  const std::string id = "multi-atomic";
  if (auto step = failed_step(id, seen.run)) return *step;
  if (seen.multi_error == ZkError::ok)
    return failed(id, "a multi whose last operation deletes a missing node succeeded");
  std::vector<std::string> left, unknown;
  for (const auto& lookup : seen.creates_left) {
    if (lookup.error == ZkError::ok) left.push_back(lookup.server);
    else if (lookup.error != ZkError::no_node)
      unknown.push_back(fmt::format("{} ({})", lookup.server, explain(lookup.error)));
  }
  if (!left.empty())
    return failed(id, fmt::format("the multi failed ({}) but applied some of its creates: {} exists",
                                  explain(seen.multi_error), fmt::join(left, ", ")));
  if (!unknown.empty())
    return failed(id, fmt::format("the multi failed ({}); whether its creates were applied is unknown: {}",
                                  explain(seen.multi_error), fmt::join(unknown, ", ")));
  if (seen.multi_error != ZkError::no_node)
    return failed(
        id, fmt::format("the multi failed with {}, not no_node from its last operation", explain(seen.multi_error)));
  return passed(id, fmt::format("the multi failed with {} and applied none of its {} creates",
                                explain(seen.multi_error), seen.creates_left.size()));
}

// The stale set's answer is judged before a later step's failure: it is what the case is about.
CaseResult cas(const CasSeen& seen) {
  const std::string id = "cas-version";
  if (seen.version_before < 0)
    if (auto step = failed_step(id, seen.run)) return *step;
  if (seen.stale_set_error != ZkError::bad_version)
    return failed(id, fmt::format("a set with the stale version 0 (node at version {}) answered {}, not bad_version",
                                  seen.version_before, explain(seen.stale_set_error)));
  if (auto step = failed_step(id, seen.run)) return *step;
  if (seen.data_after != seen.data_before || seen.version_after != seen.version_before)
    return failed(id, fmt::format("the refused set changed the node: version {} -> {}, data '{}' -> '{}'",
                                  seen.version_before, seen.version_after, seen.data_before, seen.data_after));
  return passed(id, "a set with a stale version failed with bad_version and changed nothing");
}

CaseResult move(const MoveSeen& seen) {
  const std::string id = "session-move";
  if (seen.run.ran && seen.from == seen.to)
    return {id, CaseOutcome::skipped, "one serving server: nowhere to move a session to", {}, {}, {}, 0};
  if (auto step = failed_step(id, seen.run)) return *step;
  if (seen.id_before != seen.id_after)
    return failed(id, fmt::format("the session's id changed when it moved from {} to {}: {:x} -> {:x}", seen.from,
                                  seen.to, seen.id_before.value_or(0), seen.id_after.value_or(0)));
  if (seen.ephemeral_after != ZkError::ok)
    return failed(id, fmt::format("its ephemeral could not be read after the move to {}: {}", seen.to,
                                  explain(seen.ephemeral_after)));
  if (seen.ephemeral_elsewhere != ZkError::ok)
    return failed(id, fmt::format("its ephemeral is not seen via {} after the move: {}", seen.from,
                                  explain(seen.ephemeral_elsewhere)));
  return passed(id, fmt::format("session {:x} moved from {} to {}, kept its id and its ephemeral",
                                seen.id_after.value_or(0), seen.from, seen.to));
}

double ms(microseconds value) { return static_cast<double>(value.count()) / 1000.0; }

CaseResult latency(const LatencySeen& seen, const SmokeLimits& limits) {
  auto id = "latency/" + seen.server;
  if (auto step = failed_step(id, seen.run)) return *step;
  CaseResult result = passed(id);
  std::vector<std::string> over, errors, lines;
  for (const auto& op : seen.ops) {
    auto p50 = percentile(op.samples, 50);
    auto p99 = percentile(op.samples, 99);
    result.properties.emplace_back(fmt::format("{}.p50_ms", op.op), fmt::format("{:.3f}", ms(p50)));
    result.properties.emplace_back(fmt::format("{}.p99_ms", op.op), fmt::format("{:.3f}", ms(p99)));
    lines.push_back(fmt::format("{:<6} n={} p50={:.3f}ms p99={:.3f}ms errors={}", op.op, op.samples.size(), ms(p50),
                                ms(p99), op.errors));
    if (op.errors > 0)
      errors.push_back(fmt::format("{} {} of {} ({})", op.op, op.errors,
                                   op.errors + static_cast<int>(op.samples.size()), explain(op.first_error)));
    if (limits.max_latency && p99 > *limits.max_latency) over.push_back(fmt::format("{} p99 {:.3f}ms", op.op, ms(p99)));
  }
  result.figures = fmt::format("{}\n", fmt::join(lines, "\n"));
  if (!errors.empty()) {
    result.outcome = CaseOutcome::failed;
    result.message = fmt::format("operations failed via {}: {}", seen.server, fmt::join(errors, ", "));
  } else if (!over.empty()) {
    result.outcome = CaseOutcome::failed;
    result.message = fmt::format("{} over --max-latency {}ms", fmt::join(over, ", "), limits.max_latency->count());
  } else {
    result.message = fmt::format("{} operations of each kind", seen.ops.empty() ? 0 : seen.ops.front().samples.size());
  }
  return result;
}

// clients:<path>: someone is registered there (an ephemeral under it, or the node itself ephemeral),
// or, for a plain node such as /controller_epoch, it is there with data. Nobody registered fails:
// the clients the ensemble is for are not on it.
CaseResult clients_case(const ClientPathRead& read) {
  auto id = "clients:" + read.path;
  if (read.error == ZkError::no_node)
    return failed(id, fmt::format("{} is not there: no client has registered", read.path));
  if (read.error != ZkError::ok) return failed(id, fmt::format("reading {}: {}", read.path, explain(read.error)));
  std::vector<std::string> names, lines;
  for (const auto& held : read.held) {
    names.push_back(held.path == read.path ? read.path : held.path.substr(held.path.rfind('/') + 1));
    lines.push_back(
        fmt::format("{} session {} created {}", held.path, session_text(held.owner),
                    iso8601(std::chrono::system_clock::time_point(std::chrono::milliseconds(held.ctime_ms)))));
  }
  CaseResult result = passed(id);
  result.detail = fmt::format("{}", fmt::join(lines, "\n"));
  result.properties.emplace_back("registrations", std::to_string(read.held.size()));
  if (!read.held.empty()) result.message = fmt::format("{} registered: {}", read.held.size(), fmt::join(names, ", "));
  else if (!read.data.empty())
    result.message = fmt::format("{} holds no registration; its data: {}", read.path, read.data);
  else return failed(id, fmt::format("nobody is registered under {}", read.path));
  return result;
}

CaseResult cleanup(const SmokeObservations& seen) {
  if (!seen.left_behind.empty())
    return failed("cleanup", fmt::format("left behind: {}", fmt::join(seen.left_behind, ", ")));
  if (seen.cleanup.error != ZkError::ok)
    return failed("cleanup", fmt::format("removing {}: {}", seen.run_path, explain(seen.cleanup.error)));
  return passed("cleanup", fmt::format("{} and everything below it removed", seen.run_path));
}

}  // namespace

std::vector<CaseResult> judge_sessions(const SmokeObservations& seen, const SmokeLimits& limits) {
  if (seen.prepare.error != ZkError::ok) {
    auto why =
        fmt::format("{}{}: {}", seen.prepare.what, seen.prepare.server.empty() ? "" : " via " + seen.prepare.server,
                    explain(seen.prepare.error));
    auto cases = sessions_not_run(seen.servers, why);
    for (const auto& read : seen.clients) cases.push_back(clients_case(read));
    return cases;
  }
  std::vector<CaseResult> cases{finish(round_trip(seen.round_trip), seen.round_trip.run),
                                finish(ephemeral(seen.ephemeral), seen.ephemeral.run),
                                finish(watch(seen.watch), seen.watch.run),
                                finish(sequential(seen.sequential), seen.sequential.run),
                                finish(multi(seen.multi), seen.multi.run),
                                finish(cas(seen.cas), seen.cas.run),
                                finish(move(seen.move), seen.move.run)};
  for (const auto& one : seen.latency) cases.push_back(finish(latency(one, limits), one.run));
  for (const auto& read : seen.clients) cases.push_back(clients_case(read));
  cases.push_back(cleanup(seen));
  return cases;
}

std::vector<CaseResult> sessions_not_run(const std::vector<std::string>& servers, const std::string& why) {
  std::vector<CaseResult> cases;
  for (const char* id : {"round-trip", "ephemeral-cleanup", "watch-fires", "sequential-order", "multi-atomic",
                         "cas-version", "session-move"})
    cases.push_back(failed(id, "not run: " + why));
  for (const auto& server : servers) cases.push_back(failed("latency/" + server, "not run: " + why));
  return cases;
}

microseconds percentile(std::vector<microseconds> samples, double p) {
  if (samples.empty()) return microseconds(0);
  std::ranges::sort(samples);
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

std::optional<long long> sequence_number(const std::string& path) {
  constexpr std::size_t kDigits = 10;
  if (path.size() < kDigits) return std::nullopt;
  auto digits = std::string_view(path).substr(path.size() - kDigits);
  if (!std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return std::stoll(std::string(digits));
}

int count(const std::vector<CaseResult>& cases, CaseOutcome outcome) {
  return static_cast<int>(std::ranges::count_if(cases, [&](const CaseResult& one) { return one.outcome == outcome; }));
}

}  // namespace zkverify
