#pragma once
// The ZooKeeper C client (multi-threaded flavour) as zkverify sets it up: its process-wide
// settings, the numeric addresses a handle is given, and the translations of what it answers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <zookeeper/zookeeper.h>
#include <boost/asio/ip/address.hpp>

#include "model/facts/addresses.hpp"
#include "model/facts/session.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes::c_client {

// Sets the client's process-wide settings (its globals: the log, the hosts' order) at the first
// call, before the first handle; later calls change nothing. Returns zookeeper_init's flags. The
// log goes nowhere without `log_path` (zkverify reports errors itself).
int configure(const std::optional<std::string>& log_path);

// A listed server with the addresses its host resolved to: zookeeper_init is given these, so the
// peer address of the session's socket maps back to the server's name.
struct KnownServer {
  std::string name;
  std::uint16_t port = 0;
  std::vector<boost::asio::ip::address> addresses;
};

// The listed servers whose hosts resolved (`found` is resolve_all's answer for their hosts, in order).
std::vector<KnownServer> known_servers(const std::vector<ServerAddress>& servers, std::vector<Resolution> found);

// "address:port,..." for zookeeper_init: numeric, so that it looks nothing up. IPv6 addresses go
// without brackets: the 3.8 client splits each entry at its last colon and does not understand
// "[::1]:2181".
std::string connect_string(const std::vector<KnownServer>& servers);

// The listed name of the server `zh` is connected to: "" while not connected, "address:port" when
// the peer is none of the listed servers.
std::string name_of_peer(zhandle_t* zh, const std::vector<KnownServer>& servers);

SessionState session_state_of(int state);
// What a data watch's event says; none for an event that does not end the watch.
std::optional<WatchKind> watch_kind_of(int type, int state);
int create_flags(CreateMode mode);
NodeStat node_stat(const Stat* stat);

}  // namespace zkverify::probes::c_client
