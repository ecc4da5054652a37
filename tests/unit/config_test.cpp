// One description of the ensemble for every command: --config FILE (TOML as CLI11 reads it) and
// ZKVERIFY_<OPTION> variables, layered flag > environment > file > default, through the real
// command line (run_command_line) on fakes.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"
#include "verifier/commands/option_layers.hpp"
#include "verifier/store/config_file.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace command_line;
namespace fs = std::filesystem;

namespace {

// A configuration file in the temporary directory, removed at the end of the test.
class ScratchConfig {
 public:
  explicit ScratchConfig(const std::string& text) {
    static int made = 0;
    path_ = (fs::temp_directory_path() / fmt::format("zkverify-config-{}-{}.toml", ::getpid(), ++made)).string();
    std::ofstream(path_) << text;
  }
  ~ScratchConfig() { fs::remove(path_); }
  ScratchConfig(const ScratchConfig&) = delete;
  ScratchConfig& operator=(const ScratchConfig&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool is_json(const std::string& text) { return nlohmann::json::accept(text); }

// A command line that must fail before anything is probed (no servers needed).
Ran parse_layered(std::vector<std::string> args, std::map<std::string, std::string> environment = {}) {
  zkverify::fake::Ensemble zookeeper;
  return run(zookeeper, std::move(args), std::move(environment));
}

}  // namespace

TEST_CASE("config: the top level describes the ensemble for every command, a [section] one command's settings") {
  FakeEnsemble ensemble;
  ScratchConfig config(
      fmt::format("# the kafka ensemble\nservers = \"{}\"\nensemble = \"kafka\"\n\n[quorum]\noutput = \"json\"\n",
                  ensemble.servers()));
  auto quorum = run(ensemble.zookeeper, {"quorum", "--config", config.path()});
  INFO(quorum.out << quorum.err);
  CHECK(quorum.exit_code == 0);
  CHECK(quorum.json()["verdict"] == "healthy");
  // order takes the same servers, and not quorum's output.
  auto order = run(ensemble.zookeeper, {"order", "--config=" + config.path()});
  INFO(order.out << order.err);
  CHECK(order.exit_code == 0);
  CHECK_FALSE(is_json(order.out));
  CHECK_THAT(order.out, Contains("pzoo-0") && Contains("zoo-1"));
  // $ZKVERIFY_CONFIG names the file when --config does not.
  auto from_variable = run(ensemble.zookeeper, {"quorum"}, {{"ZKVERIFY_CONFIG", config.path()}});
  CHECK(from_variable.exit_code == 0);
  CHECK(is_json(from_variable.out));
}

TEST_CASE("config: a flag wins over the environment, the environment over the file, the file over the default") {
  FakeEnsemble ensemble;
  ScratchConfig config(fmt::format("servers = \"{}\"\n[quorum]\noutput = \"json\"\n", ensemble.servers()));
  auto file = run(ensemble.zookeeper, {"quorum", "--config", config.path()});
  CHECK(is_json(file.out));
  auto environment = run(ensemble.zookeeper, {"quorum", "--config", config.path()}, {{"ZKVERIFY_OUTPUT", "text"}});
  CHECK_FALSE(is_json(environment.out));
  CHECK_THAT(environment.out, StartsWith("healthy"));
  auto flag =
      run(ensemble.zookeeper, {"quorum", "--config", config.path(), "--output", "json"}, {{"ZKVERIFY_OUTPUT", "text"}});
  CHECK(is_json(flag.out));
  CHECK(run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers()}).out.starts_with("healthy"));
  // A bad value below one that wins is never read: a typed --timeout hides the file's and the variable's.
  ScratchConfig bad(fmt::format("servers = \"{}\"\n[quorum]\ntimeout = \"soon\"\n", ensemble.servers()));
  CHECK(run(ensemble.zookeeper, {"quorum", "--config", bad.path()}, {{"ZKVERIFY_TIMEOUT", "5s"}}).exit_code == 0);
  CHECK(run(ensemble.zookeeper, {"quorum", "--config", bad.path(), "--timeout", "5s"}, {{"ZKVERIFY_TIMEOUT", "never"}})
            .exit_code == 0);
  // An empty variable is an unset one, as in Kubernetes' env with value "".
  CHECK(run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers()}, {{"ZKVERIFY_TIMEOUT", ""}}).exit_code ==
        0);
}

TEST_CASE("config: a value that does not parse names its variable, or its file and line") {
  ScratchConfig config("servers = \"a=h:1\"\n\n[quorum]\ntimeout = \"0s\"\nstable = \"many\"\n");
  auto file = parse_layered({"quorum", "--config", config.path()});
  CHECK(file.exit_code == 64);
  CHECK(file.err == fmt::format("zkverify quorum: --timeout '0s' must be greater than 0 (from {}:4)\n", config.path()));
  auto variable = parse_layered({"quorum", "--servers", "h:1"}, {{"ZKVERIFY_TIMEOUT", "0s"}});
  CHECK(variable.exit_code == 64);
  CHECK(variable.err == "zkverify quorum: --timeout '0s' must be greater than 0 (from ZKVERIFY_TIMEOUT)\n");
  // CLI11's own conversions (an INT) name the source too; a typed value needs no source.
  auto count = parse_layered({"quorum", "--servers", "h:1"}, {{"ZKVERIFY_STABLE", "many"}});
  CHECK(count.exit_code == 64);
  CHECK_THAT(count.err, Contains("--stable") && Contains("(from ZKVERIFY_STABLE)"));
  CHECK_THAT(parse_layered({"quorum", "--servers", "h:1", "--timeout", "0s"}).err, !Contains("(from"));
  auto servers = parse_layered({"quorum"}, {{"ZKVERIFY_SERVERS", "h:1 h:2"}});
  CHECK(servers.exit_code == 64);
  CHECK_THAT(servers.err, Contains("separate servers with ','") && Contains("(from ZKVERIFY_SERVERS)"));
}

TEST_CASE("config: a key no command takes where it stands is a usage error naming the file and line") {
  auto said = [](const std::string& text) {
    ScratchConfig config(text);
    auto ran = parse_layered({"quorum", "--config", config.path(), "--servers", "h:1"});
    CHECK(ran.exit_code == 64);
    return ran.err.substr(ran.err.find(".toml:") + 6);
  };
  CHECK(said("servers = \"h:1\"\nservrs = \"h:2\"\n") == "2: unknown key 'servrs' (did you mean servers?)\n");
  CHECK_THAT(said("timeout = \"5s\"\n"),
             StartsWith("1: 'timeout' is not one of the ensemble's keys (servers, "
                        "zoo-cfg, auth-file, sasl-user, sasl-password-file, sasl-mechanism, sasl-keytab, sasl-service, "
                        "sasl-host, tls-ca, "
                        "tls-cert, tls-key, "
                        "tls-no-hostname-check, tls-expiry-warning, admin-port, "
                        "namespace, ensemble, state): "
                        "put it under the command it is for: [quorum], [order]"));
  CHECK_THAT(said("[quorom]\nwait = \"1m\"\n"),
             StartsWith("2: unknown section [quorom]") && Contains("did you mean quorum?"));
  CHECK(said("[serve]\n\nwait = \"1m\"\n") == "3: serve has no option --wait\n");
  CHECK(said("[serve]\nintreval = \"1m\"\n") == "2: serve has no option --intreval (did you mean interval?)\n");
  CHECK_THAT(said("[quorum]\nreset-state = true\n"), StartsWith("2: --reset-state is typed on the command line only"));
  CHECK_THAT(said("[step]\ntimeout = \"1m\"\n"), StartsWith("2: --timeout is typed on the command line only"));
  CHECK_THAT(said("[quorum.deep]\nwait = \"1m\"\n"), Contains("a section is a command's name, one level deep"));
  CHECK(said("[quorum]\nwait = \"1m\"\nwait = \"2m\"\n") == "3: 'wait' is set twice in [quorum] (first on line 2)\n");
  // The whole file is checked, whichever command runs: a typo for serve fails the gate too.
  CHECK(said("servers = \"h:1\"\n[serve]\nlisten = \":9181\"\nintreval = \"1s\"\n").starts_with("4: serve has no"));
  // A key that is not a line at all is read as a switch and named.
  CHECK(said("servers = \"h:1\"\nverbose\n").starts_with("2: 'verbose' is not one of the ensemble's keys"));
}

TEST_CASE("config: --config that cannot be read is a usage error naming it") {
  auto missing = parse_layered({"quorum", "--config", "/nonexistent/zkverify.toml"});
  CHECK(missing.exit_code == 64);
  CHECK_THAT(missing.err, Contains("--config: cannot read '/nonexistent/zkverify.toml'"));
  auto directory = parse_layered({"quorum", "--config", fs::temp_directory_path().string()});
  CHECK(directory.exit_code == 64);
  CHECK_THAT(directory.err, Contains("--config: cannot read"));
  auto variable = parse_layered({"quorum", "--servers", "h:1"}, {{"ZKVERIFY_CONFIG", "/nonexistent/z.toml"}});
  CHECK(variable.exit_code == 64);
  CHECK_THAT(variable.err, Contains("/nonexistent/z.toml"));
}

TEST_CASE("config: switches from the environment and the file, one-time actions and old names never") {
  FakeEnsemble ensemble;
  auto no_write = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json"},
                      {{"ZKVERIFY_NO_WRITE", "yes"}});
  INFO(no_write.out << no_write.err);
  CHECK(no_write.json()["round_trip"].is_null());
  auto written = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--output", "json"},
                     {{"ZKVERIFY_NO_WRITE", "false"}});
  CHECK(written.json()["round_trip"]["reads_attempted"] == 5);
  auto maybe = parse_layered({"quorum", "--servers", "h:1"}, {{"ZKVERIFY_NO_WRITE", "maybe"}});
  CHECK(maybe.exit_code == 64);
  CHECK(maybe.err == "zkverify quorum: ZKVERIFY_NO_WRITE: --no-write is a switch: 'maybe' is neither true nor false\n");
  // ZKVERIFY_TIMEOUT, meant for another command, must not become step's and roll's old --timeout.
  ScratchLedger state("config");
  auto roll = run(ensemble.zookeeper,
                  {"roll", "--servers", ensemble.servers(), "--state", state.path.string(), "--dry-run", "--", "true"},
                  {{"ZKVERIFY_TIMEOUT", "1s"}});
  INFO(roll.err);
  CHECK(roll.exit_code == 0);
  CHECK_THAT(roll.err, !Contains("deprecated"));
}

TEST_CASE("config: a typed option hides the layers' option it excludes (--servers typed, --zoo-cfg set)") {
  FakeEnsemble ensemble;
  ScratchConfig config("zoo-cfg = \"/nonexistent/zoo.cfg\"\n");
  auto typed = run(ensemble.zookeeper, {"quorum", "--config", config.path(), "--servers", ensemble.servers()},
                   {{"ZKVERIFY_ZOO_CFG", "/nonexistent/zoo.cfg"}});
  INFO(typed.err);
  CHECK(typed.exit_code == 0);
  // From two layers, the higher one's is taken (both typed stay an error: cli_test).
  auto layers =
      run(ensemble.zookeeper, {"quorum", "--config", config.path()}, {{"ZKVERIFY_SERVERS", ensemble.servers()}});
  CHECK(layers.exit_code == 0);
}

TEST_CASE("config: every command's help names each option's variable") {
  for (const auto* command :
       {"quorum", "order", "safe-to-restart", "plan", "watch", "step", "roll", "serve", "probe", "smoke"}) {
    auto help = parse_layered({command, "--help"});
    INFO(command);
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Contains("(env ZKVERIFY_CONFIG)") && Contains("(env ZKVERIFY_SERVERS)"));
    CHECK_THAT(help.out, !Contains("ZKVERIFY_HELP") && !Contains("ZKVERIFY_RESET_STATE"));
  }
  CHECK_THAT(parse_layered({"step", "--help"}).out,
             Contains("(env ZKVERIFY_STEP_TIMEOUT)") && !Contains("ZKVERIFY_TIMEOUT)"));
  CHECK(zkverify::verifier::environment_name("zoo-cfg") == "ZKVERIFY_ZOO_CFG");
}

TEST_CASE("config: TOML as CLI11 reads it: arrays, dotted keys, quotes, comments, underscores") {
  using zkverify::verifier::parse_config;
  auto config = parse_config(
      "# a comment\n"
      "servers = [\"a=h:1\", \"b=h:2\"]\n"
      "zoo_cfg = '/conf/zoo.cfg'\n"
      "serve.listen = \":9181\"\n"
      "[smoke]\n"
      "junit = \"smoke.xml\"\n",
      "z.toml");
  REQUIRE(config.settings.size() == 4);
  CHECK(config.settings[0].key == "servers");
  CHECK(config.settings[0].values == std::vector<std::string>{"a=h:1", "b=h:2"});
  CHECK(config.settings[0].line == 2);
  CHECK(config.settings[1].key == "zoo-cfg");
  CHECK(config.settings[1].values == std::vector<std::string>{"/conf/zoo.cfg"});
  CHECK((config.settings[2].section == "serve" && config.settings[2].key == "listen" && config.settings[2].line == 4));
  CHECK((config.settings[3].section == "smoke" && config.settings[3].line == 6));
  CHECK(config.where(config.settings[3]) == "z.toml:6");
  // An array of servers is one list.
  FakeEnsemble ensemble;
  auto servers = ensemble.servers();
  std::string array;
  for (std::size_t at = 0; at < servers.size();) {
    auto end = std::min(servers.find(',', at), servers.size());
    array += (array.empty() ? "\"" : ", \"") + servers.substr(at, end - at) + "\"";
    at = end + 1;
  }
  ScratchConfig file("servers = [" + array + "]\n");
  auto ran = run(ensemble.zookeeper, {"quorum", "--config", file.path()});
  INFO(ran.err);
  CHECK(ran.exit_code == 0);
}
