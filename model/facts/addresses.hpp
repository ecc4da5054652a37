#pragma once
// Where the servers are: the parsed form of a ZooKeeper connect string with optional names.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/failure.hpp"

namespace zkverify {

struct ServerAddress {
  std::string name;  // "pzoo-0", or the entry itself ("127.0.0.1:2181") when unnamed
  std::string host;  // without brackets; "" is every address (IPv6 and IPv4), also for IPv6
  std::uint16_t port = 0;
  std::optional<std::uint16_t> admin_port;  // the AdminServer's HTTP port, when known
  std::optional<bool> observer{};           // its role in the configuration read by --zoo-cfg; unset for --servers

  // host:port as a user would type it ("[::1]:2181" for IPv6).
  [[nodiscard]] std::string endpoint() const;
};

// Parses "NAME=host:port,host:port,[::1]:2181,...". Throws BadInput naming the bad entry
// on empty entries, missing or out-of-range ports, and duplicate names or endpoints.
std::vector<ServerAddress> parse_server_list(std::string_view list);

// Parses "PORT" (one AdminServer port for every server) or "P1,P2,..." (one per server, in list order)
// and sets admin_port on each server. Throws BadInput on a bad port or a count mismatch.
void assign_admin_ports(std::vector<ServerAddress>& servers, std::string_view ports);

// Parses a TCP port (1..65535). Throws BadInput naming `what` and the text.
std::uint16_t parse_port(std::string_view text, std::string_view what);

// --listen HOST:PORT ("0.0.0.0:9181", "[::]:9181", "127.0.0.1:0"): throws BadInput naming --listen.
struct ListenAddress {
  std::string host;  // without brackets; "" is every address (IPv6 and IPv4)
  std::uint16_t port = 0;
};
ListenAddress parse_listen(std::string_view text);

// "pzoo-0 (10.0.0.5:2181)" for messages; the address alone when it is the name (unnamed entries).
std::string server_label(std::string_view name, std::string_view address);

}  // namespace zkverify
