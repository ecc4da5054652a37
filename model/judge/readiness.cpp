#include "model/judge/readiness.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zkverify {

std::string_view to_string(SyncProof proof) {
  switch (proof) {
    case SyncProof::round_trip: return "round-trip read after sync";
    case SyncProof::peer_state: return "mntr's zk_peer_state";
    case SyncProof::zabstate: return "AdminServer's zabstate";
    case SyncProof::synced_followers: return "leader's zk_synced_followers";
    case SyncProof::srvr_mode: return "srvr mode only";
  }
  return "?";
}

namespace {

const ServerRow* find_row(const Report& report, const std::string& name) {
  auto row = std::ranges::find(report.servers, name, &ServerRow::name);
  return row == report.servers.end() ? nullptr : &*row;
}

ReadinessCheck serving_check(const ServerRow& row) {
  if (is_serving(row.state)) return {"serving", true, {}};
  auto reason = fmt::format("{} is {}", row.name, to_string(row.state));
  if (!row.error.empty()) reason += ": " + row.error;
  return {"serving", false, reason};
}

// The ensemble's newest zxid: the highest any serving server reports (the leader's, once it wrote).
std::optional<Zxid> ensemble_zxid(const Report& report) {
  std::optional<Zxid> newest;
  for (const auto& row : report.servers)
    if (is_serving(row.state) && row.zxid) newest = std::max(newest.value_or(Zxid{}), *row.zxid);
  return newest;
}

ReadinessCheck epoch_check(const Report& report, const ServerRow& row) {
  if (!is_serving(row.state)) return {"epoch", false, "not serving, so on no epoch"};
  auto newest = ensemble_zxid(report);
  if (!row.zxid || !newest) return {"epoch", false, fmt::format("{} reported no zxid", row.name)};
  if (row.zxid->epoch() == newest->epoch()) return {"epoch", true, {}};
  // Right after an election the leader's zxid is the new epoch's first (counter 0) and a synced
  // follower still reports the last epoch's until the first write: not a lag. The sync proof decides.
  if (newest->counter() == 0 && row.zxid->epoch() < newest->epoch()) return {"epoch", true, {}};
  return {"epoch", false,
          fmt::format("{} is on epoch {:#x}, the ensemble on {:#x}", row.name, row.zxid->epoch(), newest->epoch())};
}

// What the report says against this server (its worst finding), to explain a failed proof.
std::string finding_about(const Report& report, const std::string& server, std::string fallback) {
  for (const auto& finding : report.findings)
    if (finding.server == server && finding.severity != Severity::info) return finding.message;
  return fallback;
}

ReadinessCheck synced_check(const Report& report, const ServerRow& row, SyncProof proof,
                            const std::optional<LocalPhase>& phase) {
  if (!is_serving(row.state)) return {"synced", false, "not serving"};
  switch (proof) {
    case SyncProof::peer_state:
      // "following - broadcast": the follower finished syncing with the leader and takes proposals.
      if (phase->value.ends_with(" - broadcast")) return {"synced", true, {}};
      return {"synced", false, fmt::format("zk_peer_state is '{}', not '... - broadcast'", phase->value)};
    case SyncProof::zabstate:
      // The same phase, as the AdminServer names it (ZabState: election, discovery, synchronization, broadcast).
      if (phase->value == "broadcast") return {"synced", true, {}};
      return {"synced", false, fmt::format("the AdminServer's zabstate is '{}', not 'broadcast'", phase->value)};
    case SyncProof::round_trip:
      if (row.read_back == true) return {"synced", true, {}};
      if (!row.read_back) return {"synced", false, finding_about(report, row.name, "the cycle made no write to read")};
      return {"synced", false, finding_about(report, row.name, "the cycle's write was not read back after sync")};
    case SyncProof::synced_followers:
      if (row.synced == true) return {"synced", true, {}};
      return {"synced", false, "the leader's zk_synced_followers does not count every follower"};
    case SyncProof::srvr_mode: return {"synced", true, {}};
  }
  return {"synced", false, "unknown proof"};
}

SyncProof proof_for(const ServerRow& row, bool wrote, const std::optional<LocalPhase>& phase) {
  if (wrote) return SyncProof::round_trip;
  if (phase) return phase->source;
  return row.synced.has_value() ? SyncProof::synced_followers : SyncProof::srvr_mode;
}

}  // namespace

Readiness judge_readiness(const Report& report, const std::string& local, bool wrote,
                          const std::optional<LocalPhase>& phase) {
  Readiness readiness;
  readiness.local = local;
  const auto* row = find_row(report, local);
  if (row == nullptr) {
    readiness.proof = wrote ? SyncProof::round_trip : SyncProof::srvr_mode;
    readiness.checks = {{"serving", false, local + " is not in the report"}};
    return readiness;
  }
  readiness.proof = proof_for(*row, wrote, phase);
  readiness.checks = {serving_check(*row), epoch_check(report, *row),
                      synced_check(report, *row, readiness.proof, phase)};
  readiness.ready = std::ranges::all_of(readiness.checks, &ReadinessCheck::passed);
  return readiness;
}

std::optional<std::string> parse_peer_state(std::string_view mntr_reply) {
  constexpr std::string_view key = "zk_peer_state\t";
  for (auto line_start = mntr_reply.find(key); line_start != std::string_view::npos;
       line_start = mntr_reply.find(key, line_start + 1)) {
    if (line_start != 0 && mntr_reply[line_start - 1] != '\n') continue;
    auto value = mntr_reply.substr(line_start + key.size());
    value = value.substr(0, value.find('\n'));
    if (!value.empty() && value.back() == '\r') value.remove_suffix(1);
    return std::string(value);
  }
  return std::nullopt;
}

std::optional<std::string> parse_zabstate(std::string_view admin_body) {
  auto body = nlohmann::json::parse(admin_body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return std::nullopt;
  auto state = body.find("zabstate");
  if (state == body.end() || !state->is_string()) return std::nullopt;
  return state->get<std::string>();
}

std::optional<LocalPhase> zabstate_phase(std::string_view admin_body) {
  if (auto state = parse_zabstate(admin_body)) return LocalPhase{SyncProof::zabstate, *state};
  return std::nullopt;
}

std::string first_failure(const Readiness& readiness) {
  for (const auto& check : readiness.checks)
    if (!check.passed) return check.name + ": " + check.reason;
  return {};
}

namespace {

std::string readiness_line(const Readiness& readiness) {
  if (readiness.ready) return fmt::format("{} ready (sync proof: {})", readiness.local, to_string(readiness.proof));
  return fmt::format("{} not ready: {}", readiness.local, first_failure(readiness));
}

std::string leader_text(const Report& report) { return report.leader.value_or("none"); }

}  // namespace

std::vector<std::string> describe_changes(const Report* before_report, const Readiness* before, const Report& report,
                                          const Readiness& after) {
  std::vector<std::string> lines;
  if (!before || before->ready != after.ready) lines.push_back(readiness_line(after));
  if (!before_report || before_report->leader != report.leader)
    lines.push_back(before_report ? fmt::format("leader {} -> {}", leader_text(*before_report), leader_text(report))
                                  : fmt::format("leader {}", leader_text(report)));
  if (!before_report || before_report->verdict != report.verdict)
    lines.push_back(before_report
                        ? fmt::format("verdict {} -> {}", to_string(before_report->verdict), to_string(report.verdict))
                        : fmt::format("verdict {}", to_string(report.verdict)));
  return lines;
}

bool is_alive(std::chrono::steady_clock::time_point last_cycle_end, std::chrono::steady_clock::time_point now,
              std::chrono::milliseconds interval, std::chrono::milliseconds timeout) {
  return now - last_cycle_end <= 3 * interval + timeout;
}

}  // namespace zkverify
