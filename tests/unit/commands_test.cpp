// The command line's boundary: typed options parsed once, and the one mapping of errors to exit codes.

#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "model/facts/failure.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"

using namespace zkverify;
using namespace zkverify::verifier;
using Catch::Matchers::Contains;

namespace {

// Parses `args` (without the program name) into EnsembleOptions, as a subcommand would.
EnsembleOptions parse_ensemble(std::vector<std::string> args) {
  CLI::App app;
  EnsembleOptions options;
  add_ensemble_options(app, options, true);
  std::vector<const char*> argv{"zkverify"};
  for (const auto& arg : args) argv.push_back(arg.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

int exit_code_of(const std::function<int()>& body, std::string& said) {
  std::ostringstream err;
  int code = run_guarded("quorum", err, body);
  said = err.str();
  return code;
}

}  // namespace

TEST_CASE("options: the values are typed once parsed, and --admin-port applies wherever it stands") {
  auto options = parse_ensemble({"--admin-port", "8080,8081", "--servers", "a=h1:2181,b=[::1]:2182", "--output", "json",
                                 "--namespace", "/apps/zk", "--timeout", "2s", "--no-write"});
  REQUIRE(options.servers.size() == 2);
  CHECK(options.servers[1].name == "b");
  CHECK(options.servers[1].host == "::1");
  CHECK(options.servers[0].admin_port == 8080);
  CHECK(options.servers[1].admin_port == 8081);
  CHECK(options.output == OutputFormat::json);
  CHECK(options.namespace_path == "/apps/zk");
  CHECK(options.timeout == std::chrono::seconds(2));
  CHECK(options.no_write);
  CHECK(parse_ensemble({"--servers", "h1:1,h2:2", "--admin-port", "9000"}).servers[1].admin_port == 9000);
}

TEST_CASE("options: a bad value names its flag") {
  CHECK_THROWS_WITH(parse_ensemble({"--servers", "h1:1,h2:2", "--admin-port", "1,2,3"}),
                    Contains("--admin-port takes one port or one per server"));
  CHECK_THROWS_WITH(parse_ensemble({"--servers", "h1:1", "--output", "yaml"}), Contains("--output 'yaml'"));
  CHECK_THROWS_WITH(parse_ensemble({"--servers", "h1:1", "--namespace", "rel"}), Contains("--namespace 'rel'"));
  CHECK_THROWS_WITH(parse_ensemble({"--servers", "h1:1", "--timeout", "5"}), Contains("is not a duration"));
  CHECK_THROWS_WITH(parse_ensemble({"--servers", "h1:1,h1:1"}), Contains("appears twice"));
}

TEST_CASE("exit codes: one mapping for every kind of error") {
  std::string said;
  CHECK(exit_code_of([] { return 1; }, said) == kExitDegraded);
  CHECK(said.empty());
  CHECK(exit_code_of([]() -> int { throw_usage("--stable 0: must be at least 1"); }, said) == kExitUsage);
  CHECK(said == "zkverify quorum: --stable 0: must be at least 1\n");
  CHECK(exit_code_of([]() -> int { throw Error(Failure::state_unreadable, "state file L is locked"); }, said) ==
        kExitUsage);
  CHECK(exit_code_of([]() -> int { throw Error(Failure::state_unwritable, "fsync L: No space left"); }, said) ==
        kExitIoError);
  CHECK(said == "zkverify quorum: fsync L: No space left\n");
  CHECK(exit_code_of([]() -> int { throw BadInput("'x' is not a duration"); }, said) == kExitUsage);
  CHECK(said == "zkverify quorum: 'x' is not a duration\n");
  // A library's invalid_argument (std::stoi in a bug, say) is no usage error: the input was not at fault.
  CHECK(exit_code_of([]() -> int { throw std::invalid_argument("stoi"); }, said) == kExitInternal);
  CHECK_THAT(said, Contains("internal error: stoi"));
  CHECK(exit_code_of([]() -> int { throw std::logic_error("a bug"); }, said) == kExitInternal);
  CHECK_THAT(said, Contains("internal error: a bug") && Contains("not verified"));
  CHECK(exit_code(Verdict::healthy) == 0);
  CHECK(exit_code(Verdict::degraded) == 1);
  CHECK(exit_code(Verdict::critical) == 2);
}

TEST_CASE("commands: each registers itself once, under its own name") {
  CLI::App app;
  std::vector<std::string> names;
  for (auto& command : all_commands()) {
    auto& sub = command->add_to(app);
    CHECK(sub.get_name() == command->name());
    names.emplace_back(command->name());
  }
  CHECK(names == std::vector<std::string>{"quorum", "order", "safe-to-restart", "plan", "watch", "step", "roll",
                                          "serve", "probe", "smoke", "completion"});
}
