#include "model/judge/server_side.hpp"

#include <vector>

#include <fmt/format.h>

#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"

namespace zkverify {

namespace {

// "pzoo-0 +9, zoo-0 +3"
std::string gains_text(const ConnectionsMoved& moved) {
  std::vector<std::string> parts;
  for (const auto& [server, gain] : moved.gained) parts.push_back(fmt::format("{} +{}", server, gain));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::optional<Finding> connections_moved_finding(const std::string& server, const std::optional<ConnectionsMoved>& moved) {
  if (!moved || moved->clients == 0) return std::nullopt;
  auto clients = counted(moved->clients, "client connection");
  auto message =
      moved->all
          ? fmt::format("{}'s {} moved to {} within {} of the first poll that found it not serving ({}; "
                        "srvr's counts, zkverify's watch among them)",
                        server, clients, counted(std::ssize(moved->gained), "other server"),
                        format_duration(moved->took), gains_text(*moved))
          : fmt::format("of {}'s {}, {} {} seen on other servers ({}, {} after the first poll that found it not "
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

}  // namespace zkverify
