#include "model/judge/server_side.hpp"

#include <map>
#include <vector>

#include <fmt/format.h>

#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/client_changes.hpp"

namespace zkverify {

namespace {

// "pzoo-0 +9, zoo-0 +3"
std::string gains_text(const ConnectionsMoved& moved) {
  std::vector<std::string> parts;
  for (const auto& [server, gain] : moved.gained) parts.push_back(fmt::format("{} +{}", server, gain));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::optional<Finding> connections_moved_finding(const std::string& server,
                                                 const std::optional<ConnectionsMoved>& moved) {
  if (!moved || moved->clients == 0) return std::nullopt;
  auto clients = counted(moved->clients, "client connection");
  auto message = moved->all
                     ? fmt::format(
                           "{}'s {} moved to {} within {} of the first poll that found it not serving ({}; "
                           "srvr's counts, zkverify's watch among them)",
                           server, clients, counted(std::ssize(moved->gained), "other server"),
                           format_duration(moved->took), gains_text(*moved))
                     : fmt::format(
                           "of {}'s {}, {} {} seen on other servers ({}, {} after the first poll that found it not "
                           "serving), and no more before it served again: the others waited for it, reconnected "
                           "between polls, or closed",
                           server, clients, moved->moved(), was_or_were(moved->moved()), gains_text(*moved),
                           format_duration(moved->took));
  return make_finding(FindingCode::clients_moved, server, std::move(message));
}

std::optional<Finding> ephemerals_fell_finding(const std::string& server, std::optional<std::int64_t> before,
                                               std::optional<std::int64_t> after, const std::string& counted_on) {
  if (!before || !after || *after >= *before) return std::nullopt;
  return make_finding(
      FindingCode::ephemerals_fell, server,
      fmt::format("the tree's ephemeral nodes fell from {} to {} during the step on {} (mntr on {}, before COMMAND "
                  "and once the ensemble had recovered): the sessions that held {} of them ended, or their clients "
                  "deleted them",
                  *before, *after, server, counted_on, *before - *after));
}

std::optional<Finding> election_risk(const std::string& leader, const std::optional<Election>& last,
                                     const std::vector<ConsFacts>& cons,
                                     const std::optional<std::vector<ClientPathRead>>& reads) {
  if (!last || last->leaderless_ms <= 0) return std::nullopt;
  std::chrono::milliseconds election{last->leaderless_ms};
  std::map<std::int64_t, std::chrono::milliseconds> sessions;  // each once, whichever server lists it
  for (const auto& listed : cons)
    for (const auto& connection : listed.connections) sessions[connection.session] = connection.timeout;
  std::vector<std::string> named;
  std::int64_t short_ones = 0;
  for (const auto& [session, timeout] : sessions) {
    if (timeout > election) continue;
    ++short_ones;
    for (const auto& read : reads.value_or(std::vector<ClientPathRead>{}))
      for (const auto& registration : read.held)
        if (registration.owner == session)
          named.push_back(fmt::format("{} with session {} (timeout {})", client_name(registration.path),
                                      session_text(session), format_duration(timeout)));
  }
  if (short_ones == 0) return std::nullopt;
  return make_finding(
      FindingCode::election_outlasts_timeouts, leader,
      fmt::format("{}, about to restart, leads: the last election a step saw (during the step on {}, {}) went {} "
                  "without a leader, and {} of the {} sessions the servers list {} a timeout no longer{}{}: a "
                  "client disconnected for longer than its timeout is lost to libraries that say so (Curator, "
                  "Pulsar's brokers), even where the server keeps its session",
                  leader, last->during, last->at, format_duration(election), short_ones, sessions.size(),
                  short_ones == 1 ? "has" : "have", named.empty() ? "" : ": ", fmt::join(named, ", ")));
}

}  // namespace zkverify
