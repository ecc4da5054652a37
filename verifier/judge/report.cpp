#include "verifier/judge/report.hpp"

#include "probes/parsers.hpp"

namespace zkverify::verifier {

std::string_view to_string(ServerState state) {
  switch (state) {
    case ServerState::not_serving: return "not-serving";
    case ServerState::unreachable: return "unreachable";
    case ServerState::bad_reply: return "bad-reply";
    default: return probes::to_string(*mode_of(state));
  }
}

ServerState state_of(probes::Mode mode) {
  switch (mode) {
    case probes::Mode::leader: return ServerState::leader;
    case probes::Mode::follower: return ServerState::follower;
    case probes::Mode::observer: return ServerState::observer;
    case probes::Mode::standalone: return ServerState::standalone;
    case probes::Mode::read_only: return ServerState::read_only;
    case probes::Mode::unknown: break;
  }
  return ServerState::unknown;
}

std::optional<probes::Mode> mode_of(ServerState state) {
  switch (state) {
    case ServerState::leader: return probes::Mode::leader;
    case ServerState::follower: return probes::Mode::follower;
    case ServerState::observer: return probes::Mode::observer;
    case ServerState::standalone: return probes::Mode::standalone;
    case ServerState::read_only: return probes::Mode::read_only;
    case ServerState::unknown: return probes::Mode::unknown;
    case ServerState::not_serving:
    case ServerState::unreachable:
    case ServerState::bad_reply: break;
  }
  return std::nullopt;
}

bool is_serving(ServerState state) {
  auto mode = mode_of(state);
  return mode && probes::is_serving(*mode);
}

bool is_serving_voter(ServerState state) {
  auto mode = mode_of(state);
  return mode && probes::is_serving_voter(*mode);
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::healthy: return "healthy";
    case Verdict::degraded: return "degraded";
    case Verdict::critical: return "critical";
  }
  return "critical";
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
  }
  return "critical";
}

}  // namespace zkverify::verifier
