#pragma once
// The command line's values, parsed once where they enter (parse, don't validate): after CLI11 is
// done, a command holds typed values (servers, durations, an output format, a checked namespace)
// and never parses them again. A bad value is a usage error naming the flag.

#include <chrono>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/facts/addresses.hpp"
#include "model/facts/failure.hpp"
#include "model/render/format.hpp"
#include "verifier/check/ensemble_check.hpp"

namespace zkverify::verifier {

// "text" or "json"; throws BadInput naming --output.
OutputFormat parse_output(std::string_view text);
// An absolute znode path below which zkverify may write; throws BadInput saying why not.
std::string parse_namespace(std::string_view path);

// --ensemble NAME: letters, digits, '-', '_' and '.' (a Prometheus label value people group by);
// throws BadInput naming --ensemble.
std::string parse_ensemble_name(std::string_view name);

// --servers LIST (required), or --zoo-cfg FILE. With `given` (the gates: quorum, safe-to-restart,
// order, plan, step, roll), --zoo-cfg also gives the list each server runs with, for servers that do not report
// their own (3.4): FILE's for every server, NAME=FILE's (repeatable, beside FILE) for NAME.
void add_servers_option(CLI::App& command, std::vector<ServerAddress>& servers,
                        std::map<std::string, ConfFacts>* given = nullptr);
// "NAME=FILE" as --zoo-cfg reads it (a server's own list): the name and the file; nullopt for a FILE
// (no '=', or a character no server name has before it: "./a=b.cfg").
std::optional<std::pair<std::string, std::string>> held_list_entry(const std::string& value);
// --admin-port PORT[,PORT...], applied to `servers`; add it after add_servers_option.
void add_admin_port_option(CLI::App& command, std::vector<ServerAddress>& servers);
// A DURATION flag ("500ms", "2s", "5m", "1h").
CLI::Option* add_duration_option(CLI::App& command, const std::string& flag, std::chrono::milliseconds& target,
                                 const std::string& help);
CLI::Option* add_duration_option(CLI::App& command, const std::string& flag,
                                 std::optional<std::chrono::milliseconds>& target, const std::string& help);
void add_output_option(CLI::App& command, OutputFormat& output,
                       const std::string& help = "text or json (default text)");
void add_namespace_option(CLI::App& command, std::string& namespace_path);
// --clients PATH|kafka, repeatable (quorum, step, roll): the paths whose registrations are read and
// followed; `kafka` adds /brokers/ids, /controller and /controller_epoch. Each path once, in order.
void add_clients_option(CLI::App& command, std::vector<std::string>& client_paths);
// One --clients value: a preset's paths, or the absolute znode path it is. Throws BadInput naming it.
std::vector<std::string> parse_client_paths(std::string_view value);
// --state FILE, checked as an output file.
// --refuse-at-risk (step, roll): before the leader's step, COMMAND is not run when client sessions'
// timeouts are no longer than the last election the ledger saw; it needs `state` (--state), when given.
void add_refuse_at_risk_option(CLI::App& command, bool& refuse, CLI::Option* state);
CLI::Option* add_state_option(CLI::App& command, std::optional<std::string>& state_file, const std::string& help);
// --to FILE (safe-to-restart, order, step, roll): the zoo.cfg a restarted server reads when it starts
// again; its voters (read when parsing ends: an unreadable file is a usage error) go to `returns_with`,
// and with `list` (step, roll) its whole list too: the one a restarted server whose list --zoo-cfg
// gave then holds.
void add_to_option(CLI::App& command, std::optional<std::set<int>>& returns_with,
                   std::optional<ConfFacts>* list = nullptr);
// FLAG FILE for a file zkverify writes: checked when read (check_output_path), before any probe.
// `read_first`: the file is read before it is written (check_output_path).
CLI::Option* add_output_file_option(CLI::App& command, const std::string& flag, std::optional<std::string>& file,
                                    const std::string& help, bool read_first = false);

// --auth-file FILE (or $ZKVERIFY_AUTH_FILE, as every option: option_layers.hpp): the credentials every
// session presents. Only the path is kept here; the command reads the file when it runs.
// --auth-file, and TLS: --tls-ca, --tls-cert, --tls-key, --tls-no-hostname-check, --tls-expiry-warning.
void add_connection_options(CLI::App& command, ConnectionOptions& connection);

// --servers, --timeout, --output, --admin-port, --auth-file; with `with_write_flags`, --namespace and --no-write too.
void add_ensemble_options(CLI::App& command, EnsembleOptions& options, bool with_write_flags);

// --step-timeout DURATION: what bounds one step of step or roll (COMMAND, then the wait for
// recovery). --timeout is its old name, kept for one release: `old_name_used` says it was given, so
// that the command warns (--timeout will be one check's deadline there too, as everywhere else).
void add_step_timeout_options(CLI::App& command, std::chrono::milliseconds& step_timeout, bool& old_name_used);
// The warning for --timeout on step or roll, on `err`.
void warn_old_step_timeout(std::ostream& err, std::string_view command);

// Throws a usage error unless `name` is one of `servers`: "--restart 'x' is not in --servers (names: a,b)".
void require_listed(const std::vector<ServerAddress>& servers, const std::string& name, std::string_view what);

}  // namespace zkverify::verifier
