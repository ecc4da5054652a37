#pragma once
// The ZooKeeper C client (multi-threaded flavour) as zkverify sets it up: its process-wide
// settings, the hosts a handle is given, and the translations of what it answers.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <zookeeper/zookeeper.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

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
  std::string host;  // as listed: a name, a numeric address, or "" (every address)
  std::uint16_t port = 0;
  std::vector<boost::asio::ip::address> addresses;  // what `host` resolved to when the session opened
};

// The listed servers whose hosts resolved (`found` is resolve_all's answer for their hosts, in order).
std::vector<KnownServer> known_servers(const std::vector<ServerAddress>& servers, std::vector<Resolution> found);

// "host:port,..." for zookeeper_init. A name goes as listed: the client looks it up again after every
// connection loss, so a server that comes back on another address (a Kubernetes pod) is found
// again; a name that does not resolve then is skipped until the next attempt. A numeric or empty
// host goes as the addresses it stands for. IPv6 addresses go without brackets: the 3.8 client
// splits each entry at its last colon and does not understand "[::1]:2181".
std::string connect_string(const std::vector<KnownServer>& servers);

// The listed name of the server `zh` is connected to: "" while not connected, "address:port" when
// the peer is none of the listed servers.
// Which listed server `peer` is: by the addresses known, else by looking the names listed with the
// peer's port up again (`look_up`: a server that came back on another address); else
// "address:port". Blocks while it looks up: for the C client's threads.
std::string listed_name(const std::vector<KnownServer>& servers, const boost::asio::ip::tcp::endpoint& peer,
                        const std::function<Resolution(const std::string&)>& look_up);

SessionState session_state_of(int state);
// What a data watch's event says; none for an event that does not end the watch.
std::optional<WatchKind> watch_kind_of(int type, int state);
int create_flags(CreateMode mode);
NodeStat node_stat(const Stat* stat);

}  // namespace zkverify::probes::c_client
