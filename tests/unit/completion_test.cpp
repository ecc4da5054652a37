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

}  // namespace

TEST_CASE("completion: each shell's script names every subcommand and every option") {
  auto names = names_on_the_command_line();
  REQUIRE(names.size() > 40);
  zkverify::fake::Ensemble zookeeper;
  for (std::string shell : {"bash", "zsh", "fish"}) {
    auto ran = run(zookeeper, {"completion", shell});
    INFO(shell << ": " << ran.err);
    REQUIRE(ran.exit_code == 0);
    for (const auto& name : names) CHECK_THAT(ran.out, Contains(name));
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
  CHECK_THAT(ran.out, Contains("    --restart|--local|NAME) "));  // their values are server names
  CHECK_THAT(ran.out, !Contains("completion)"));                  // the hidden command is not offered
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
