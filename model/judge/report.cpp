#include "model/judge/report.hpp"

#include <algorithm>

#include "model/parse/parsers.hpp"

namespace zkverify {

std::string version_of(const Report& report, const std::string& server) {
  auto row = std::ranges::find(report.servers, server, &ServerRow::name);
  return row == report.servers.end() ? "" : row->version;
}

std::string_view to_string(ServerState state) {
  switch (state) {
    case ServerState::not_serving: return "not-serving";
    case ServerState::unreachable: return "unreachable";
    case ServerState::bad_reply: return "bad-reply";
    default: return to_string(*mode_of(state));
  }
}

ServerState state_of(Mode mode) {
  switch (mode) {
    case Mode::leader: return ServerState::leader;
    case Mode::follower: return ServerState::follower;
    case Mode::observer: return ServerState::observer;
    case Mode::standalone: return ServerState::standalone;
    case Mode::read_only: return ServerState::read_only;
    case Mode::unknown: break;
  }
  return ServerState::unknown;
}

std::optional<Mode> mode_of(ServerState state) {
  switch (state) {
    case ServerState::leader: return Mode::leader;
    case ServerState::follower: return Mode::follower;
    case ServerState::observer: return Mode::observer;
    case ServerState::standalone: return Mode::standalone;
    case ServerState::read_only: return Mode::read_only;
    case ServerState::unknown: return Mode::unknown;
    case ServerState::not_serving:
    case ServerState::unreachable:
    case ServerState::bad_reply: break;
  }
  return std::nullopt;
}

bool is_serving(ServerState state) {
  auto mode = mode_of(state);
  return mode && is_serving(*mode);
}

bool is_serving_voter(ServerState state) {
  auto mode = mode_of(state);
  return mode && is_serving_voter(*mode);
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::healthy: return "healthy";
    case Verdict::degraded: return "degraded";
    case Verdict::critical: return "critical";
  }
  return "critical";
}

Finding make_finding(FindingCode code, std::string server, std::string message) {
  return {info(code).severity, code, std::move(server), std::move(message)};
}

bool has_finding(const std::vector<Finding>& findings, FindingCode code) {
  return std::ranges::any_of(findings, [code](const Finding& finding) { return finding.code == code; });
}

std::map<int, std::string> servers_by_id(const std::vector<ServerRow>& servers) {
  std::map<int, std::string> names;
  for (const auto& row : servers)
    if (row.id) names.emplace(*row.id, row.name);
  return names;
}

}  // namespace zkverify
