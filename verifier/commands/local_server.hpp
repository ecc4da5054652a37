#pragma once
// What serve and probe share on the command line: which listed server is this pod's, and the flags
// of its check.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

// The flags serve and probe share, added after --servers: --local, --admin-port, --namespace, --no-write.
void add_local_check_options(CLI::App& command, EnsembleOptions& options, std::string& local);

// --local's default: the listed server named like this host; the only server when there is one.
// Throws a usage error naming the host name and the servers when neither applies.
std::string choose_local(const std::vector<ServerAddress>& servers, const std::string& local_flag,
                         const std::string& host_name);

}  // namespace zkverify::verifier
