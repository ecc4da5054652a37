#include "probes/c_client.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <boost/asio/ip/tcp.hpp>

namespace zkverify::probes::c_client {

// Without the log, no "client environment" lines either (a passwd lookup per handle). The
// client's shuffle of the hosts is off for good: the switch is a global that zookeeper_init and
// zoo_set_servers read, and setting it per open would make handles open one at a time. Sessions
// that want a random order get it from the keeper.
int configure(const std::optional<std::string>& log_path) {
  static const int init_flags = [&log_path] {
    // Intentionally never closed: the C client may log until the process exits.
    FILE* stream = std::fopen(log_path ? log_path->c_str() : "/dev/null", "a");
    if (stream) zoo_set_log_stream(stream);
    zoo_set_debug_level(log_path ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_ERROR);
    zoo_deterministic_conn_order(1);
    return log_path ? 0 : ZOO_NO_LOG_CLIENTENV;
  }();
  return init_flags;
}

std::vector<KnownServer> known_servers(const std::vector<ServerAddress>& servers, std::vector<Resolution> found) {
  std::vector<KnownServer> known;
  for (std::size_t i = 0; i < servers.size() && i < found.size(); ++i)
    if (found[i].ok())
      known.push_back({servers[i].name, servers[i].host, servers[i].port, std::move(found[i].addresses)});
  return known;
}

namespace {

bool is_name(const std::string& host) { return !host.empty() && !numeric_resolution(host); }

}  // namespace

std::string connect_string(const std::vector<KnownServer>& servers) {
  std::string hosts;
  auto add = [&hosts](const std::string& host, std::uint16_t port) {
    if (!hosts.empty()) hosts += ',';
    hosts += host + ':' + std::to_string(port);
  };
  for (const auto& server : servers) {
    if (is_name(server.host)) add(server.host, server.port);
    else
      for (const auto& address : server.addresses) add(address.to_string(), server.port);
  }
  return hosts;
}

std::string listed_name(const std::vector<KnownServer>& servers, const boost::asio::ip::tcp::endpoint& peer,
                        const std::function<Resolution(const std::string&)>& look_up) {
  auto holds = [&peer](const std::vector<boost::asio::ip::address>& addresses) {
    return std::ranges::find(addresses, peer.address()) != addresses.end();
  };
  for (const auto& server : servers)
    if (peer.port() == server.port && holds(server.addresses)) return server.name;
  for (const auto& server : servers)
    if (peer.port() == server.port && is_name(server.host) && holds(look_up(server.host).addresses)) return server.name;
  return peer.address().to_string() + ':' + std::to_string(peer.port());
}

SessionState session_state_of(int state) {
  if (state == ZOO_CONNECTED_STATE) return SessionState::connected;
  if (state == ZOO_EXPIRED_SESSION_STATE) return SessionState::expired;
  if (state == ZOO_AUTH_FAILED_STATE) return SessionState::auth_failed;
  return SessionState::connecting;  // connecting, associating, not yet connected
}

std::optional<WatchKind> watch_kind_of(int type, int state) {
  if (type == ZOO_CHANGED_EVENT) return WatchKind::changed;
  if (type == ZOO_DELETED_EVENT) return WatchKind::deleted;
  if (type == ZOO_CREATED_EVENT) return WatchKind::created;
  if (type == ZOO_CHILD_EVENT) return WatchKind::children;
  // A disconnection keeps the watch (the client sets it again on reconnecting); expiry ends it.
  if (type == ZOO_SESSION_EVENT && state == ZOO_EXPIRED_SESSION_STATE) return WatchKind::session_lost;
  return std::nullopt;
}

int create_flags(CreateMode mode) {
  switch (mode) {
    case CreateMode::persistent: return ZOO_PERSISTENT;
    case CreateMode::ephemeral: return ZOO_EPHEMERAL;
    case CreateMode::persistent_sequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::ephemeral_sequential: return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

NodeStat node_stat(const Stat* stat) {
  if (!stat) return {};
  return {Zxid{static_cast<std::uint64_t>(stat->czxid)}, Zxid{static_cast<std::uint64_t>(stat->mzxid)}, stat->version,
          stat->ephemeralOwner,
          std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(stat->ctime))};
}

}  // namespace zkverify::probes::c_client
