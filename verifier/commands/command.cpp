#include "verifier/commands/command.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "verifier/check/output.hpp"
#include "verifier/commands/command_words.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/help_text.hpp"
#include "verifier/commands/option_layers.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {
namespace {

// The commands --help lists (not the hidden ones), in its order.
std::vector<std::string> listed_commands(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* command : app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); }))
    names.push_back(command->get_name());
  return names;
}

int usage_error(const Context& context, std::string_view where, const std::string& what) {
  context.err << "zkverify" << (where.empty() ? "" : " ") << where << ": " << what << "\n";
  return kExitUsage;
}

// `zkverify help [COMMAND]`: the help of zkverify or of COMMAND.
int print_help(const CLI::App& app, std::span<const std::string> words, const Context& context) {
  if (words.empty()) {
    context.out << app.help();
    return kExitHealthy;
  }
  if (const auto* command = find_command(app, words.front())) {
    context.out << command->help("zkverify");
    return kExitHealthy;
  }
  return usage_error(
      context, "help",
      fmt::format("unknown command '{}'{}", words.front(), did_you_mean(words.front(), listed_commands(app))));
}

// A first word that is an option, not a command: zkverify's own (--help, --version) go to CLI11.
std::optional<int> check_leading_option(const CLI::App& app, const std::string& word, const Context& context) {
  auto spelling = word.substr(0, word.find('='));
  if (spelling == "-h" || spelling == "--help" || spelling == "--version") return std::nullopt;
  for (const auto* command : app.get_subcommands({}))
    if (!first_unknown_word(*command, std::span(&spelling, 1)))
      return usage_error(context, "",
                         fmt::format("{} is an option of a command: put the command first (zkverify COMMAND {} ...)",
                                     spelling, spelling));
  return usage_error(context, "",
                     fmt::format("unknown option {}{}", spelling, did_you_mean(spelling, {"--help", "--version"})));
}

// What CLI11 would get wrong or say badly about the words (argv less the program): no command, an
// unknown one, `help` and `version`, a mistyped option of the command. None: CLI11 may parse them.
std::optional<int> check_words(const CLI::App& app, std::span<const std::string> words, const Context& context) {
  if (words.empty())
    return usage_error(
        context, "",
        fmt::format("no command given (commands: {}); see zkverify --help", fmt::join(listed_commands(app), ", ")));
  const auto& first = words.front();
  if (first == "help") return print_help(app, words.subspan(1), context);
  if (first == "version") {
    context.out << "zkverify " ZKVERIFY_VERSION "\n";
    return kExitHealthy;
  }
  if (first.starts_with('-')) return check_leading_option(app, first, context);
  const auto* command = find_command(app, first);
  if (!command)
    return usage_error(
        context, "",
        fmt::format("unknown command '{}'{}; see zkverify --help", first, did_you_mean(first, listed_commands(app))));
  if (auto unknown = first_unknown_word(*command, words.subspan(1))) return usage_error(context, first, *unknown);
  return std::nullopt;
}

}  // namespace

std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_quorum_command());
  commands.push_back(make_order_command());
  commands.push_back(make_safe_to_restart_command());
  commands.push_back(make_plan_command());
  commands.push_back(make_watch_command());
  commands.push_back(make_step_command());
  commands.push_back(make_roll_command());
  commands.push_back(make_serve_command());
  commands.push_back(make_probe_command());
  commands.push_back(make_smoke_command());
  commands.push_back(make_completion_command());  // hidden from --help
  return commands;
}

namespace {

// --zoo-cfg FILE stands in for the required --servers (ours: COMMAND after -- is not looked at);
// --zoo-cfg NAME=FILE (one server's list) does not.
void servers_from_zoo_cfg(CLI::App& app, const std::vector<std::string>& words) {
  auto end = std::find(words.begin(), words.end(), std::string("--"));
  bool file = false;
  for (auto word = words.begin(); word != end; ++word) {
    if (*word == "--zoo-cfg" && word + 1 != end) file = file || !held_list_entry(*(word + 1));
    if (word->starts_with("--zoo-cfg=")) file = file || !held_list_entry(word->substr(10));
  }
  if (!file) return;
  for (auto* command : app.get_subcommands({}))
    if (auto* servers = command->get_option_no_throw("--servers")) servers->required(false);
}

// CLI11's parse of `words` (argv less the program, with the layers' options): the exit code when it
// ends the run (help, version, a usage error), none when the chosen command may run.
std::optional<int> parse(CLI::App& app, const LayeredWords& layers, const Context& context) {
  std::vector<const char*> argv{"zkverify"};
  for (const auto& word : layers.words) argv.push_back(word.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Success& success) {
    return app.exit(success, context.out, context.err);  // --help, --version
  } catch (const CLI::ParseError& error) {
    std::string what = with_layer_named(error.what(), layers);
    if (what == "--servers is required") what += " (or --zoo-cfg FILE)";  // CLI11 knows one of the two
    context.err << "zkverify: " << what << " (see --help)\n";
    return kExitUsage;
  } catch (const BadInput& bad) {  // a value that did not parse: the option's callback named the flag
    return usage_error(context, layers.words.front(), with_layer_named(bad.what(), layers));
  } catch (...) {
    auto chosen = app.get_subcommands();
    return exit_code_for(std::current_exception(), chosen.empty() ? "" : chosen.front()->get_name(), context.err);
  }
  return std::nullopt;
}

}  // namespace

namespace {

int run_with(int argc, const char* const* argv, const Context& context) {
  // Named here, not from argv[0]: the usage lines say `zkverify`, however it was called.
  CLI::App app{"zkverify: verifies a ZooKeeper ensemble is safe to operate on (quorum, leader, sync, continuity)",
               "zkverify"};
  app.formatter(std::make_shared<EnvironmentFormatter>());  // before the commands: they take it when added
  app.set_version_flag("--version", "zkverify " ZKVERIFY_VERSION);
  app.require_subcommand(1);
  app.footer(top_level_footer());
  auto commands = all_commands();
  for (auto& command : commands) command->add_to(app).footer(command_footer(command->name()));
  add_config_options(app);
  std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  if (auto answered = check_words(app, words, context)) return *answered;
  LayeredWords layers;
  try {
    layers = add_layered_options(app, words, context.environment);
  } catch (const BadInput& bad) {
    return usage_error(context, words.front(), bad.what());
  }
  servers_from_zoo_cfg(app, layers.words);
  if (auto ended = parse(app, layers, context)) return *ended;
  for (auto& command : commands)
    if (app.got_subcommand(std::string(command->name())))
      return run_guarded(command->name(), context.err, [&] { return command->run(context); });
  return kExitUsage;  // unreachable: CLI11 requires one subcommand
}

}  // namespace

// From here on one actor owns the streams given: every line the run writes goes through it.
int run_command_line(int argc, const char* const* argv, const Context& given) {
  Output output(given.executor, given.out, given.err);
  Context context{given.executor,           given.keepers, output.out(), output.err(), given.environment, given.tls,
                  given.tls_expiry_warning, &output};
  int code = run_with(argc, argv, context);
  // A stream that takes longer than this to write to (a pipe nobody reads) loses the rest.
  output.finish(Clock::now() + std::chrono::seconds(10));
  return code;
}

}  // namespace zkverify::verifier
