// `zkverify completion SHELL`, run in-process: each script names every subcommand and every option
// the command line defines. tests/install/common.sh's check_completion runs the scripts in the shells.

#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"

using Catch::Matchers::Contains;
using namespace command_line;

namespace {

// Every visible subcommand's name and every spelling of its options, read from the CLI11 App.
std::vector<std::string> names_on_the_command_line() {
  CLI::App app;
  auto commands = zkverify::verifier::all_commands();
  for (auto& command : commands) command->add_to(app);
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    names.push_back(sub->get_name());
    for (const CLI::Option* option : sub->get_options()) {
      for (const auto& name : option->get_lnames()) names.push_back("--" + name);
      for (const auto& name : option->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

// fish's `complete` spells --servers "-l servers" and -h "-s h".
std::string fish_spelling(const std::string& name) {
  if (name.starts_with("--")) return "-l " + name.substr(2);
  if (name.starts_with("-")) return "-s " + name.substr(1);
  return name;
}

// The line of `text` that contains `part`.
std::string line_with(const std::string& text, const std::string& part) {
  auto at = text.find(part);
  if (at == std::string::npos) return "";
  auto begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

}  // namespace

TEST_CASE("completion: each shell's script names every subcommand and every option") {
  auto names = names_on_the_command_line();
  REQUIRE(names.size() > 40);
  zkverify::fake::Ensemble zookeeper;
  for (std::string shell : {"bash", "zsh", "fish"}) {
    auto ran = run(zookeeper, {"completion", shell});
    INFO(shell << ": " << ran.err);
    REQUIRE(ran.exit_code == 0);
    for (const auto& name : names) CHECK_THAT(ran.out, Contains(shell == "fish" ? fish_spelling(name) : name));
    CHECK_THAT(ran.out, Contains("text json"));  // --output's values
    CHECK_THAT(ran.out, Contains("_zkverify_servers"));
  }
}

TEST_CASE("completion: the bash script lists each subcommand's options and the ones that take a value") {
  zkverify::fake::Ensemble zookeeper;
  auto ran = run(zookeeper, {"completion", "bash"});
  REQUIRE(ran.exit_code == 0);
  CHECK_THAT(ran.out, Contains("complete -o default -F _zkverify zkverify"));
  CHECK_THAT(ran.out, Contains("    safe-to-restart) opts='-h --help "));
  CHECK_THAT(ran.out, Contains(" positional=NAME ;;"));
  CHECK_THAT(ran.out, Contains(" --servers "));
  auto servers = line_with(ran.out, "compgen -W \"$(_zkverify_servers)\"");  // the arm of server-name values
  CHECK_THAT(servers, Contains("--restart") && Contains("--local") && Contains("NAME"));
  CHECK_THAT(ran.out, !Contains("completion)"));  // the hidden command is not offered
}

TEST_CASE("completion: hidden from --help, and an unknown shell is a usage error naming the shells") {
  zkverify::fake::Ensemble zookeeper;
  auto help = run(zookeeper, {"--help"});
  CHECK_THAT(help.out, !Contains("completion"));
  auto ran = run(zookeeper, {"completion", "tcsh"});
  CHECK(ran.exit_code == 64);
  CHECK_THAT(ran.err, Contains("tcsh") && Contains("bash, zsh or fish"));
  CHECK(ran.out.empty());
  CHECK(run(zookeeper, {"completion"}).exit_code == 64);
}
