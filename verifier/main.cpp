// zkverify's command line: CLI11 wiring only; every command lives in the zkverify_core library.

#include <iostream>

#include <CLI/CLI.hpp>

#include "verifier/render/durations.hpp"
#include "verifier/commands/ensemble.hpp"
#include "verifier/commands/restart.hpp"
#include "verifier/commands/step.hpp"
#include "verifier/commands/watch.hpp"

namespace {

using namespace zkverify::verifier;

// A CLI11 callback that parses a DURATION flag into milliseconds.
auto duration_into(std::chrono::milliseconds& target) {
  return [&target](const std::string& text) { target = parse_duration(text); };
}

// A CLI11 callback that parses a DURATION flag into an optional.
auto optional_duration_into(std::optional<std::chrono::milliseconds>& target) {
  return [&target](const std::string& text) { target = parse_duration(text); };
}

// The watch engine's flags, as watch and step take them.
void add_watch_tuning(CLI::App& command, WatchTuning& tuning) {
  command.add_option("--rate", tuning.rate, "Writes per second, through the sessions in turn (default 20)");
  command.add_option_function<std::string>("--session-timeout", duration_into(tuning.session_timeout),
                                           "Session timeout to ask the servers for (default 10s)");
  command.add_option_function<std::string>("--max-unavailable", optional_duration_into(tuning.max_unavailable),
                                           "Fail (exit 2) when writes failed for longer than this in a row");
}

// The flags every command that looks at the ensemble shares.
void add_ensemble_options(CLI::App& command, EnsembleOptions& options, bool with_write_flags) {
  command.add_option("--servers", options.servers, "Connect string host:port,...; entries may be NAME=host:port")
      ->required();
  command.add_option_function<std::string>("--timeout", duration_into(options.timeout),
                                           "Deadline for one check, e.g. 500ms, 2s, 5m (default 5s)");
  command.add_option("--output", options.output, "text or json (default text)");
  command.add_option_function<std::string>(
      "--admin-port", [&options](const std::string& ports) { options.admin_ports = ports; },
      "AdminServer HTTP port: one for all servers, or one per server in list order");
  if (!with_write_flags) return;
  command.add_option("--namespace", options.namespace_path, "Znode under which zkverify writes (default /zkverify)");
  command.add_flag("--no-write", options.no_write, "Skip the write/read round trip");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zkverify: verifies a ZooKeeper ensemble is safe to operate on (quorum, leader, sync, continuity)"};
  app.set_version_flag("--version", "zkverify " ZKVERIFY_VERSION);
  app.require_subcommand(1);

  QuorumOptions quorum;
  auto* quorum_cmd =
      app.add_subcommand("quorum", "Exit 0 only when the ensemble is healthy: 1 degraded, 2 critical, 64 usage error");
  add_ensemble_options(*quorum_cmd, quorum, true);
  quorum_cmd->add_option_function<std::string>(
      "--state", [&](const std::string& path) { quorum.state_file = path; },
      "Ledger file: remembers zxids, the durability marker, membership; a regression is critical (data-loss)");
  quorum_cmd->add_flag("--reset-state", quorum.reset_state, "Forget the ledger (says what it forgets) and start over");
  quorum_cmd->add_option_function<std::string>(
      "--wait", optional_duration_into(quorum.wait),
      "Repeat the check until healthy --stable times in a row, or this long has passed");
  quorum_cmd->add_option_function<std::string>("--interval", duration_into(quorum.interval),
                                               "Pause between --wait attempts (default 1s)");
  quorum_cmd->add_option("--stable", quorum.stable, "Healthy checks in a row that end --wait (default 3)");

  EnsembleOptions order;
  auto* order_cmd = app.add_subcommand("order", "Print the order in which to restart the servers, the leader last");
  add_ensemble_options(*order_cmd, order, false);

  SafeToRestartOptions safe;
  auto* safe_cmd = app.add_subcommand(
      "safe-to-restart", "Exit 0 if restarting NAME now keeps a quorum of synced voters; 1 if not, with the reason");
  safe_cmd->add_option("NAME", safe.name, "The server to restart, as named in --servers")->required();
  add_ensemble_options(*safe_cmd, safe, true);
  safe_cmd->add_option_function<std::string>(
      "--state", [&](const std::string& path) { safe.state_file = path; },
      "Ledger file: remembers which servers this restart round has approved, so the leader can go last");

  WatchOptions watch;
  auto* watch_cmd = app.add_subcommand(
      "watch", "Client sessions and ordered writes beside an upgrade: events as they happen, a summary at the end");
  watch_cmd->add_option("--servers", watch.servers, "Connect string host:port,...; entries may be NAME=host:port")
      ->required();
  watch_cmd->add_option_function<std::string>("--duration", optional_duration_into(watch.duration),
                                              "Stop after this long (default: at SIGINT or SIGTERM)");
  watch_cmd->add_option("--output", watch.output, "text or json lines (default text)");
  watch_cmd->add_option("--namespace", watch.namespace_path, "Znode under which zkverify writes (default /zkverify)");
  add_watch_tuning(*watch_cmd, watch.tuning);

  StepOptions step;
  auto* step_cmd = app.add_subcommand(
      "step", "Wrap one restart: check it is safe, run COMMAND with a watch running, wait until healthy, verify");
  step_cmd->add_option("--servers", step.servers, "Connect string host:port,...; entries may be NAME=host:port")
      ->required();
  step_cmd->add_option("--restart", step.restart, "The server COMMAND restarts, as named in --servers")->required();
  step_cmd->add_option_function<std::string>("--timeout", duration_into(step.timeout),
                                             "How long to wait for the server and the ensemble afterwards (default 10m)");
  step_cmd->add_option_function<std::string>(
      "--state", [&](const std::string& path) { step.state_file = path; }, "Ledger file, as for quorum --state");
  step_cmd->add_option("--output", step.output, "text or json (default text)");
  step_cmd->add_option("--namespace", step.namespace_path, "Znode under which zkverify writes (default /zkverify)");
  add_watch_tuning(*step_cmd, step.tuning);
  step_cmd->add_option("COMMAND", step.command, "After --: the command that restarts the server")->expected(-1);

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

  if (*quorum_cmd) return run_quorum(quorum, std::cout, std::cerr);
  if (*order_cmd) return run_order(order, std::cout, std::cerr);
  if (*safe_cmd) return run_safe_to_restart(safe, std::cout, std::cerr);
  if (*watch_cmd) return run_watch(watch, std::cout, std::cerr);
  if (*step_cmd) return run_step(step, std::cout, std::cerr);
  return kExitUsage;
}
