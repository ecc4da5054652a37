// zkverify's command line: CLI11 wiring only; every command lives in the zkverify_core library.

#include <iostream>

#include <CLI/CLI.hpp>

#include "verifier/durations.hpp"
#include "verifier/quorum_command.hpp"

namespace {

using zkverify::verifier::kExitUsage;

// CLI11 callback that parses a DURATION flag into milliseconds.
auto duration_into(std::chrono::milliseconds& target) {
  return [&target](const std::string& text) { target = zkverify::verifier::parse_duration(text); };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zkverify: verifies a ZooKeeper ensemble is safe to operate on (quorum, leader, sync, round trip)"};
  app.set_version_flag("--version", "zkverify " ZKVERIFY_VERSION);
  app.require_subcommand(1);

  zkverify::verifier::QuorumOptions quorum;
  auto* quorum_cmd = app.add_subcommand(
      "quorum", "Exit 0 only when the ensemble is healthy: 1 degraded, 2 critical, 64 usage error");
  quorum_cmd->add_option("--servers", quorum.servers, "Connect string host:port,...; entries may be NAME=host:port")
      ->required();
  quorum_cmd->add_option_function<std::string>("--timeout", duration_into(quorum.timeout),
                                                "Deadline for the whole check, e.g. 500ms, 2s, 5m (default 5s)");
  quorum_cmd->add_option("--output", quorum.output, "text or json (default text)");
  quorum_cmd->add_option("--namespace", quorum.namespace_path, "Znode under which the round trip writes (default /zkverify)");
  quorum_cmd->add_flag("--no-write", quorum.no_write, "Skip the write/read round trip");
  quorum_cmd->add_option_function<std::string>(
      "--admin-port", [&](const std::string& ports) { quorum.admin_ports = ports; },
      "AdminServer HTTP port: one for all servers, or one per server in list order");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);  // --help, --version
  } catch (const CLI::ParseError& error) {
    std::cerr << "zkverify: " << error.what() << " (see --help)\n";
    return kExitUsage;
  } catch (const std::invalid_argument& error) {  // from a parsing callback
    std::cerr << "zkverify: " << error.what() << "\n";
    return kExitUsage;
  }

  if (*quorum_cmd) return zkverify::verifier::run_quorum(quorum, std::cout, std::cerr);
  return kExitUsage;
}
