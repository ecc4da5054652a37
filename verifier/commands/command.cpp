#include "verifier/commands/command.hpp"

#include <ostream>

#include "verifier/commands/exit_codes.hpp"

namespace zkverify::verifier {

std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_quorum_command());
  commands.push_back(make_order_command());
  commands.push_back(make_safe_to_restart_command());
  commands.push_back(make_watch_command());
  commands.push_back(make_step_command());
  commands.push_back(make_roll_command());
  commands.push_back(make_serve_command());
  commands.push_back(make_probe_command());
  commands.push_back(make_smoke_command());
  commands.push_back(make_completion_command());  // hidden from --help
  return commands;
}

int run_command_line(int argc, const char* const* argv, const Context& context) {
  CLI::App app{"zkverify: verifies a ZooKeeper ensemble is safe to operate on (quorum, leader, sync, continuity)"};
  app.set_version_flag("--version", "zkverify " ZKVERIFY_VERSION);
  app.require_subcommand(1);
  auto commands = all_commands();
  for (auto& command : commands) command->add_to(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success, context.out, context.err);  // --help, --version
  } catch (const CLI::ParseError& error) {
    context.err << "zkverify: " << error.what() << " (see --help)\n";
    return kExitUsage;
  } catch (...) {  // a value that did not parse: the option's callback named the flag
    auto chosen = app.get_subcommands();
    return exit_code_for(std::current_exception(), chosen.empty() ? "" : chosen.front()->get_name(), context.err);
  }
  for (auto& command : commands)
    if (app.got_subcommand(std::string(command->name())))
      return run_guarded(command->name(), context.err, [&] { return command->run(context); });
  return kExitUsage;  // unreachable: CLI11 requires one subcommand
}

}  // namespace zkverify::verifier
