#pragma once
// A zkverify subcommand: it registers its own options on the command line, then runs with what was
// parsed. main.cpp only loops over all_commands(); each command lives in a file of its own.

#include <iosfwd>
#include <memory>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "verifier/check/context.hpp"

namespace zkverify::verifier {

class Command {
 public:
  virtual ~Command() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Adds the subcommand and its options to `app`; returns the subcommand.
  virtual CLI::App& add_to(CLI::App& app) = 0;
  // Runs with the parsed options; returns the exit code, or throws (see exit_codes.hpp).
  virtual int run(const Context& context) = 0;
};

std::unique_ptr<Command> make_quorum_command();
std::unique_ptr<Command> make_order_command();
std::unique_ptr<Command> make_safe_to_restart_command();
std::unique_ptr<Command> make_plan_command();
std::unique_ptr<Command> make_watch_command();
std::unique_ptr<Command> make_step_command();
std::unique_ptr<Command> make_roll_command();
std::unique_ptr<Command> make_serve_command();
std::unique_ptr<Command> make_probe_command();
std::unique_ptr<Command> make_smoke_command();
std::unique_ptr<Command> make_completion_command();

// Every command, in the order --help lists them.
std::vector<std::unique_ptr<Command>> all_commands();

// zkverify's whole command line: parses argv (argv[0] is the program), runs the chosen command with
// `context`, and returns the exit code (exit_codes.hpp). main() passes the C client's sessions;
// tests pass a fake's.
int run_command_line(int argc, const char* const* argv, const Context& context);

}  // namespace zkverify::verifier
