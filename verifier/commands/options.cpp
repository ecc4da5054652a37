#include "verifier/commands/options.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/errors.hpp"
#include "model/facts/registrations.hpp"
#include "model/facts/time_text.hpp"
#include "verifier/store/output_path.hpp"
#include "verifier/store/zoo_cfg_file.hpp"

namespace zkverify::verifier {
namespace {

// parse_duration's verdict, naming the flag: "--timeout '0s' must be greater than 0".
std::chrono::milliseconds parse_flag_duration(const std::string& flag, std::string_view text) {
  try {
    return parse_duration(text);
  } catch (const BadInput& bad) {
    throw BadInput(fmt::format("{} {}", flag, bad.what()));
  }
}

}  // namespace

OutputFormat parse_output(std::string_view text) {
  if (text == "text") return OutputFormat::text;
  if (text == "json") return OutputFormat::json;
  throw BadInput(fmt::format("--output '{}': use text or json", text));
}

std::string parse_namespace(std::string_view path) {
  auto fail = [&](std::string_view why) { return BadInput(fmt::format("--namespace '{}': {}", path, why)); };
  if (path.empty() || path.front() != '/') throw fail("must be an absolute znode path, like /zkverify");
  if (path == "/") throw fail("must not be the root: zkverify writes only below its own namespace");
  if (path.back() == '/') throw fail("must not end with '/'");
  if (path.find("//") != std::string_view::npos) throw fail("has an empty path component");
  if (path == "/zookeeper" || path.starts_with("/zookeeper/")) throw fail("/zookeeper is reserved by the server");
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) throw fail("has a control character");
  for (auto rest = path.substr(1); !rest.empty();) {
    auto component = rest.substr(0, rest.find('/'));
    if (component == "." || component == "..") throw fail("has a '.' or '..' component, which ZooKeeper refuses");
    rest.remove_prefix(std::min(rest.size(), component.size() + 1));
  }
  return std::string(path);
}

std::string parse_ensemble_name(std::string_view name) {
  if (name.empty()) throw BadInput("--ensemble is empty: name the ensemble, e.g. --ensemble kafka");
  if (name.size() > 128)
    throw BadInput(fmt::format("--ensemble '{}...' is longer than 128 characters", name.substr(0, 20)));
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw BadInput(fmt::format("--ensemble '{}': use letters, digits, '-', '_' or '.'", name));
  return std::string(name);
}

std::optional<std::pair<std::string, std::string>> held_list_entry(const std::string& value) {
  auto eq = value.find('=');
  if (eq == 0 || eq == std::string::npos) return std::nullopt;
  auto name = value.substr(0, eq);
  auto in_a_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_.:[]", c); };
  if (!std::ranges::all_of(name, in_a_name)) return std::nullopt;  // "./a=b.cfg": a FILE
  return std::pair{name, value.substr(eq + 1)};
}

namespace {

// --zoo-cfg's values: one FILE, which names the servers and is the list each holds, and beside it
// NAME=FILE for each server that runs with another list (a ConfigMap changed, the pod not yet
// restarted). Lists go to `given`, for servers that do not report their own (3.4).
void read_zoo_cfg_values(const std::vector<std::string>& values, std::vector<ServerAddress>& servers,
                         std::map<std::string, ConfFacts>* given) {
  std::map<std::string, ConfFacts> own;  // NAME=FILE's, which win over FILE's whatever their order
  bool plain = false;
  for (const auto& value : values) {
    if (auto entry = held_list_entry(value)) {
      if (!given)
        throw BadInput(
            fmt::format("--zoo-cfg {}: a server's own list (NAME=FILE) is for quorum, safe-to-restart, "
                        "order, plan, step and roll",
                        value));
      own[entry->first] = ConfFacts{std::nullopt, read_zoo_cfg_members(entry->second), false, std::nullopt};
      continue;
    }
    if (plain) throw BadInput("--zoo-cfg FILE given twice: one file names the servers (NAME=FILE: one server's list)");
    plain = true;
    servers = read_zoo_cfg_servers(value);
    if (!given) continue;
    ConfFacts list{std::nullopt, read_zoo_cfg_members(value), false, std::nullopt};  // read once, for all
    for (const auto& server : servers) (*given)[server.name] = list;
  }
  if (!plain && !own.empty())
    throw BadInput("--zoo-cfg NAME=FILE gives one server's list beside --zoo-cfg FILE, which names the servers");
  for (auto& [name, list] : own) {
    require_listed(servers, name, "--zoo-cfg ");
    (*given)[name] = std::move(list);
  }
}

}  // namespace

void add_servers_option(CLI::App& command, std::vector<ServerAddress>& servers,
                        std::map<std::string, ConfFacts>* given) {
  auto* list = command
                   .add_option_function<std::string>(
                       "--servers", [&servers](const std::string& text) { servers = parse_server_list(text); },
                       "The servers, comma-separated; each NAME=HOST:PORT or HOST:PORT (named HOST:PORT); or --zoo-cfg")
                   ->type_name("[NAME=]HOST:PORT,...");
  auto* config =
      command
          .add_option_function<std::vector<std::string>>(
              "--zoo-cfg",
              [&servers, given](const std::vector<std::string>& values) {
                read_zoo_cfg_values(values, servers, given);
              },
              given ? "Instead of --servers: ZooKeeper's zoo.cfg (and its dynamicConfigFile); each server named by "
                      "its host's first label (pzoo-0.pzoo: pzoo-0), else server.N. Also the list a server that "
                      "does not report its own (3.4) runs with; NAME=FILE (repeatable, beside FILE): NAME's own"
                    : "Instead of --servers: ZooKeeper's zoo.cfg (and its dynamicConfigFile); each server named by "
                      "its host's first label (pzoo-0.pzoo: pzoo-0), else server.N")
          ->type_name(given ? "FILE|NAME=FILE" : "FILE")
          ->allow_extra_args(false);
  // Required unless --zoo-cfg FILE is on the line (command.cpp lifts it then: CLI11 cannot require one
  // of two options without grouping them apart in --help).
  list->excludes(config)->required();
}

void add_admin_port_option(CLI::App& command, std::vector<ServerAddress>& servers) {
  // CLI11 runs option callbacks once every flag was read, in the order the options were added, so
  // --servers (added first) is parsed by now, wherever the flags stand on the command line.
  command
      .add_option_function<std::string>(
          "--admin-port", [&servers](const std::string& ports) { assign_admin_ports(servers, ports); },
          "AdminServer HTTP port: one for all servers, or one per server in list order")
      ->type_name("PORT[,PORT...]");
}

CLI::Option* add_duration_option(CLI::App& command, const std::string& flag, std::chrono::milliseconds& target,
                                 const std::string& help) {
  return command
      .add_option_function<std::string>(
          flag, [&target, flag](const std::string& text) { target = parse_flag_duration(flag, text); }, help)
      ->type_name("DURATION");
}

CLI::Option* add_duration_option(CLI::App& command, const std::string& flag,
                                 std::optional<std::chrono::milliseconds>& target, const std::string& help) {
  return command
      .add_option_function<std::string>(
          flag, [&target, flag](const std::string& text) { target = parse_flag_duration(flag, text); }, help)
      ->type_name("DURATION");
}

void add_output_option(CLI::App& command, OutputFormat& output, const std::string& help) {
  command
      .add_option_function<std::string>(
          "--output", [&output](const std::string& text) { output = parse_output(text); }, help)
      ->type_name("text|json");
}

void add_namespace_option(CLI::App& command, std::string& namespace_path) {
  command
      .add_option_function<std::string>(
          "--namespace", [&namespace_path](const std::string& path) { namespace_path = parse_namespace(path); },
          "Znode under which zkverify writes (default /zkverify)")
      ->type_name("PATH");
}

std::vector<std::string> parse_client_paths(std::string_view value) {
  if (value == kKafkaPreset) return kafka_client_paths();
  auto fail = [&](std::string_view why) { return BadInput(fmt::format("--clients '{}': {}", value, why)); };
  if (value.empty() || value.front() != '/')
    throw fail("name an absolute znode path such as /brokers/ids, or the preset kafka");
  if (value == "/") throw fail("must not be the root: name the path the clients register under");
  if (value.back() == '/') throw fail("must not end with '/'");
  if (value.find("//") != std::string_view::npos) throw fail("has an empty path component");
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) throw fail("has a control character");
  return {std::string(value)};
}

void add_refuse_at_risk_option(CLI::App& command, bool& refuse, CLI::Option* state) {
  auto* flag = command.add_flag("--refuse-at-risk", refuse,
                                "Before the leader's step, do not run COMMAND (exit 1) when client sessions have a "
                                "timeout no longer than the last election the ledger saw (election-outlasts-timeouts)");
  if (state) flag->needs(state);  // roll's --state is required anyway
}

void add_clients_option(CLI::App& command, std::vector<std::string>& client_paths) {
  command
      .add_option_function<std::vector<std::string>>(
          "--clients",
          [&client_paths](const std::vector<std::string>& values) {
            for (const auto& value : values)
              for (auto& path : parse_client_paths(value))
                if (std::ranges::find(client_paths, path) == client_paths.end()) client_paths.push_back(path);
          },
          "Follow the clients registered under PATH (their ephemeral znodes and the sessions that hold them), "
          "or kafka for /brokers/ids, /controller and /controller_epoch; repeatable")
      ->type_name("PATH|kafka")
      ->allow_extra_args(false)  // one value an occurrence: --clients A --clients B
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option* add_state_option(CLI::App& command, std::optional<std::string>& state_file, const std::string& help) {
  return add_output_file_option(command, "--state", state_file, help, true);  // an unreadable ledger: its reader's 64
}

void add_to_option(CLI::App& command, std::optional<std::set<int>>& returns_with, std::optional<ConfFacts>* list) {
  command
      .add_option_function<std::string>(
          "--to",
          [&returns_with, list](const std::string& path) {
            returns_with = read_zoo_cfg_voters(path);
            if (list) *list = ConfFacts{std::nullopt, read_zoo_cfg_members(path), false, std::nullopt};
          },
          "The zoo.cfg the restarted server reads when it starts again (a new ConfigMap): refused when its list "
          "and a list other servers hold could elect two leaders")
      ->type_name("FILE");
}

CLI::Option* add_output_file_option(CLI::App& command, const std::string& flag, std::optional<std::string>& file,
                                    const std::string& help, bool read_first) {
  return command
      .add_option_function<std::string>(
          flag,
          [&file, flag, read_first](const std::string& path) {
            check_output_path(flag, path, read_first);
            file = path;
          },
          help)
      ->type_name("FILE");
}

void add_connection_options(CLI::App& command, ConnectionOptions& connection) {
  command
      .add_option_function<std::string>(
          "--auth-file", [&connection](const std::string& path) { connection.auth_file = path; },
          "File holding the credentials every session presents, one line digest:USER:PASSWORD (keep it mode "
          "600)")
      ->type_name("FILE");
  auto* sasl_user = command
                        .add_option("--sasl-user", connection.sasl_user,
                                    "SASL (DIGEST-MD5) for every session as this user of the servers' JAAS Server "
                                    "section, for servers that require it")
                        ->type_name("USER");
  auto* sasl_password = command
                            .add_option("--sasl-password-file", connection.sasl_password_file,
                                        "File holding that user's password, one line (keep it mode 600)")
                            ->type_name("FILE");
  sasl_user->needs(sasl_password);
  sasl_password->needs(sasl_user);
  command
      .add_option("--sasl-mechanism", connection.sasl_mechanism,
                  "DIGEST-MD5 (with --sasl-user, the default) or GSSAPI (Kerberos: KRB5_CONFIG, and --sasl-keytab "
                  "or a ticket cache)")
      ->type_name("MECHANISM");
  command
      .add_option("--sasl-keytab", connection.sasl_keytab,
                  "GSSAPI: the client keytab zkverify takes its principal's tickets from (KRB5_CLIENT_KTNAME)")
      ->type_name("FILE");
  command
      .add_option("--sasl-service", connection.sasl_service,
                  "The servers' SASL service name, SERVICE/HOST@REALM for GSSAPI (default zookeeper)")
      ->type_name("SERVICE");
  command
      .add_option("--sasl-host", connection.sasl_host,
                  "The host in every server's principal (GSSAPI; default: each server's host as listed) or "
                  "DIGEST-MD5's digest-uri (default zk-sasl-md5)")
      ->type_name("HOST");
  auto* ca =
      command
          .add_option("--tls-ca", connection.tls_ca,
                      "Trusted CA bundle (PEM): TLS for every connection to the servers (their secureClientPort)")
          ->type_name("FILE");
  auto* cert = command
                   .add_option("--tls-cert", connection.tls_cert,
                               "Client certificate (chain, PEM), for ssl.clientAuth=need|want")
                   ->type_name("FILE");
  auto* key =
      command.add_option("--tls-key", connection.tls_key, "Its private key (PEM; never printed)")->type_name("FILE");
  auto* no_name = command.add_flag("--tls-no-hostname-check", connection.tls_no_hostname_check,
                                   "Verify the servers' certificate chain but not their names");
  auto* warning = add_duration_option(command, "--tls-expiry-warning", connection.tls_expiry_warning,
                                      "Warn when a certificate expires within this (default 14d)");
  key->needs(cert);
  cert->needs(key);
  cert->needs(ca);
  no_name->needs(ca);
  warning->needs(ca);
}

void add_ensemble_options(CLI::App& command, EnsembleOptions& options, bool with_write_flags) {
  add_servers_option(command, options.servers, &options.given_lists);
  add_connection_options(command, options.connection);
  add_duration_option(command, "--timeout", options.timeout, "Deadline for one check, e.g. 500ms, 2s, 5m (default 5s)");
  add_output_option(command, options.output);
  add_admin_port_option(command, options.servers);
  if (!with_write_flags) return;
  add_namespace_option(command, options.namespace_path);
  command.add_flag("--no-write", options.no_write, "Skip the write/read round trip");
}

void add_step_timeout_options(CLI::App& command, std::chrono::milliseconds& step_timeout, bool& old_name_used) {
  auto* bound = add_duration_option(command, "--step-timeout", step_timeout,
                                    "Bounds one step: COMMAND, then the wait for the server and the ensemble (default "
                                    "10m)");
  auto* old = command.add_option_function<std::string>(
      "--timeout",
      [&step_timeout, &old_name_used](const std::string& text) {
        step_timeout = parse_flag_duration("--timeout", text);
        old_name_used = true;
      },
      "Deprecated: the old name of --step-timeout, with its meaning (a warning says so)");
  // Neither a variable nor a file sets it: ZKVERIFY_TIMEOUT meant for another command would bound a step.
  old->type_name("DURATION")->excludes(bound)->configurable(false);
}

void warn_old_step_timeout(std::ostream& err, std::string_view command) {
  err << fmt::format(
      "zkverify {}: warning: --timeout is deprecated here: it still bounds the whole step in this release, as "
      "--step-timeout does; use --step-timeout (in the next release --timeout is one check's deadline, as for every "
      "other command)\n",
      command);
}

void require_listed(const std::vector<ServerAddress>& servers, const std::string& name, std::string_view what) {
  if (std::ranges::find(servers, name, &ServerAddress::name) != servers.end()) return;
  std::vector<std::string> names;  // a loop, not views::transform: clang 14 cannot build libstdc++ 12's views
  for (const auto& server : servers) names.push_back(server.name);
  throw_usage(fmt::format("{}'{}' is not in --servers (names: {})", what, name, fmt::join(names, ",")));
}

}  // namespace zkverify::verifier
