#pragma once
// Reader of ZooKeeper's own configuration (zoo.cfg and its 3.5+ dynamic file), for --zoo-cfg: the
// servers a client reaches, named as the pods are, with the roles the configuration gives them.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/addresses.hpp"
#include "model/facts/facts.hpp"

namespace zkverify {

// One server.N line: its id, the host of its quorum address, its role and its client endpoint
// when the line names one (3.5+: ";[clientAddress:]clientPort").
struct ZooCfgServer {
  int id = 0;
  std::string host;
  bool observer = false;
  std::optional<std::string> client_host;  // "" stays unset: 0.0.0.0 and :: mean the server's host
  std::optional<std::uint16_t> client_port;
  std::string quorum_address, election_address;  // the first address's, as conf prints them: "host:2888"
  std::string client_address;                    // after ';' as written, "" when none
  int line = 0;
};

struct ZooCfg {
  std::vector<ZooCfgServer> servers;
  std::optional<std::uint16_t> client_port;  // clientPort=
  bool secure_client_port = false;           // secureClientPort= is set
  std::string dynamic_file;                  // dynamicConfigFile=, as written
};

// Reads the lines of `text` as Java reads properties; `file` names it in errors. Throws BadInput
// "FILE:LINE: what is wrong" on a server line it cannot read (0.0.0.0 for a host included), a
// duplicate id, or a bad port.
ZooCfg parse_zoo_cfg(std::string_view text, std::string_view file);

// The servers of `config` (those of `dynamic` when given: 3.5+ keeps the membership there), as
// --servers would list them: named by the first label of each host (pzoo-0.pzoo -> pzoo-0), else
// server.N; the client port from the line, else clientPort=. Throws BadInput naming `file` when a
// server has no client port, when only secureClientPort is set, when two would be reached at one
// host and port, or when there are no servers.
std::vector<ServerAddress> zoo_cfg_servers(const ZooCfg& config, const ZooCfg* dynamic, std::string_view file);

// The voters of `config`'s membership (`dynamic`'s when given), by id, each named as
// zoo_cfg_servers names it (its host's first label, else server.N): what a plan calls them.
std::map<int, std::string> zoo_cfg_voter_names(const ZooCfg& config, const ZooCfg* dynamic);

// The membership of `config` (`dynamic`'s when given) as a server's conf reports it, sorted by id:
// the list a server started on this file holds (for a 3.4 server, which does not report its own).
std::vector<Member> zoo_cfg_members(const ZooCfg& config, const ZooCfg* dynamic);

}  // namespace zkverify
