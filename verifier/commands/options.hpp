#pragma once
// The command line's values, parsed once where they enter (parse, don't validate): after CLI11 is
// done, a command holds typed values (servers, durations, an output format, a checked namespace)
// and never parses them again. A bad value is a usage error naming the flag.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "probes/addresses.hpp"
#include "verifier/render/format.hpp"

namespace zkverify::verifier {

// What every command that looks at the ensemble takes.
struct EnsembleOptions {
  std::vector<probes::ServerAddress> servers;  // --servers, with --admin-port applied
  std::chrono::milliseconds timeout{5000};     // one check: probes and round trip together
  OutputFormat output = OutputFormat::text;
  std::string namespace_path = "/zkverify";    // checked by parse_namespace
  bool no_write = false;
  std::optional<std::string> auth_file;        // --auth-file, or $ZKVERIFY_AUTH_FILE
  // Ask only the four-letter words that can change the verdict (quorum); others keep every word
  // (the sidecar's readiness reads mntr's zk_peer_state on every server).
  bool verdict_words_only = false;
};

// "text" or "json"; throws std::invalid_argument naming --output.
OutputFormat parse_output(std::string_view text);
// An absolute znode path below which zkverify may write; throws std::invalid_argument saying why not.
std::string parse_namespace(std::string_view path);

// --servers LIST (required).
void add_servers_option(CLI::App& command, std::vector<probes::ServerAddress>& servers);
// --admin-port PORT[,PORT...], applied to `servers`; add it after add_servers_option.
void add_admin_port_option(CLI::App& command, std::vector<probes::ServerAddress>& servers);
// A DURATION flag ("500ms", "2s", "5m", "1h").
CLI::Option* add_duration_option(CLI::App& command, const std::string& flag, std::chrono::milliseconds& target,
                                 const std::string& help);
CLI::Option* add_duration_option(CLI::App& command, const std::string& flag,
                                 std::optional<std::chrono::milliseconds>& target, const std::string& help);
void add_output_option(CLI::App& command, OutputFormat& output, const std::string& help = "text or json (default text)");
void add_namespace_option(CLI::App& command, std::string& namespace_path);
// --state FILE.
void add_state_option(CLI::App& command, std::optional<std::string>& state_file, const std::string& help);

// --auth-file FILE, or the file $ZKVERIFY_AUTH_FILE names (the flag wins): the credentials every
// session presents. Only the path is kept here; the command reads the file when it runs.
void add_auth_file_option(CLI::App& command, std::optional<std::string>& auth_file);

// --servers, --timeout, --output, --admin-port, --auth-file; with `with_write_flags`, --namespace and --no-write too.
void add_ensemble_options(CLI::App& command, EnsembleOptions& options, bool with_write_flags);

// Throws a usage error unless `name` is one of `servers`: "--restart 'x' is not in --servers (names: a,b)".
void require_listed(const std::vector<probes::ServerAddress>& servers, const std::string& name, std::string_view what);

}  // namespace zkverify::verifier
