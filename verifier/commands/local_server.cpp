#include "verifier/commands/local_server.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify::verifier {

void add_local_check_options(CLI::App& command, EnsembleOptions& options, std::string& local) {
  command.add_option("--local", local, "This pod's server, one of --servers (default: the host name)")
      ->type_name("NAME");
  add_admin_port_option(command, options.servers);
  add_connection_options(command, options.connection);
  add_namespace_option(command, options.namespace_path);
  command.add_flag("--no-write", options.no_write,
                   "No round trip: prove sync with the local mntr's zk_peer_state, else the AdminServer's zabstate "
                   "(with --admin-port), else the leader's zk_synced_followers, else srvr's mode");
}

std::string choose_local(const std::vector<ServerAddress>& servers, const std::string& local_flag,
                         const std::string& host_name) {
  if (!local_flag.empty()) {
    require_listed(servers, local_flag, "--local ");
    return local_flag;
  }
  auto named = std::ranges::find(servers, host_name, &ServerAddress::name);
  if (named != servers.end()) return named->name;
  if (servers.size() == 1) return servers.front().name;
  std::vector<std::string> names;
  for (const auto& server : servers) names.push_back(server.name);
  throw_usage(fmt::format("--local not given and the host name '{}' is not in --servers (names: {}): pass --local NAME",
                          host_name, fmt::join(names, ",")));
}

}  // namespace zkverify::verifier
