#pragma once
// --zoo-cfg: the servers from ZooKeeper's own configuration file, the one its pods mount.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/facts/addresses.hpp"
#include "model/facts/facts.hpp"

namespace zkverify::verifier {

// Reads zoo.cfg at `path` and, when it names one, its dynamicConfigFile (relative to zoo.cfg's
// folder when relative; an absolute one that is not there, beside zoo.cfg), and returns their servers
// (model/parse/zoo_cfg.hpp). Throws BadInput naming the file, and the line, when a file cannot be read or parsed.
std::vector<ServerAddress> read_zoo_cfg_servers(const std::string& path);

// The membership of zoo.cfg at `path` (its dynamic file's when it names one) as a server's conf
// reports it: the list a server started on it holds (--zoo-cfg, for 3.4 servers, which do not say).
// Throws BadInput as read_zoo_cfg_servers, and when no line names a server.
std::vector<Member> read_zoo_cfg_members(const std::string& path);

// For --to: the ids that vote in the membership of zoo.cfg at `path` (its dynamic file's when it names one):
// the list a server started on it will hold. Throws BadInput as read_zoo_cfg_servers, and when no
// line names a voter.
std::set<int> read_zoo_cfg_voters(const std::string& path);
// The same voters, each with its name (model/parse/zoo_cfg.hpp's zoo_cfg_voter_names).
std::map<int, std::string> read_zoo_cfg_voter_names(const std::string& path);

}  // namespace zkverify::verifier
