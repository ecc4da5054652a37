// The command line as people type it, with the mistakes they make: each case goes through the real
// argument parser (run_command_line), as main() runs it, on fakes where a run needs servers.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"
#include "loopback_port.hpp"
#include "model/facts/addresses.hpp"

using Catch::Matchers::Contains;
using namespace command_line;
namespace fs = std::filesystem;

namespace {

// Runs a command line that must fail before anything is probed (no servers needed).
Ran parse_only(std::vector<std::string> args) {
  zkverify::fake::Ensemble zookeeper;
  return run(zookeeper, std::move(args));
}

int lines_with(const std::string& text, const std::string& part) {
  int count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// The time on the last line of `text` that holds `part`, in seconds: its "[   1.1s]", "[ 24ms]" or
// "(1.1s)" (the elapsed time quorum --wait and smoke --wait print after each attempt); -1 if none.
double last_seconds(const std::string& text, const std::string& part) {
  static const std::regex time(R"(([0-9]+(\.[0-9]+)?)(ms|s)[\])])");
  std::istringstream lines(text);
  double seconds = -1;
  std::smatch match;
  for (std::string line; std::getline(lines, line);)
    if (line.find(part) != std::string::npos && std::regex_search(line, match, time))
      seconds = std::stod(match[1]) / (match[3] == "ms" ? 1000 : 1);
  return seconds;
}

}  // namespace

TEST_CASE("cli: an unknown command is named with a suggestion, and help and version are commands too") {
  auto typo = parse_only({"quorom"});
  CHECK(typo.exit_code == 64);
  CHECK_THAT(typo.err, Contains("unknown command 'quorom' (did you mean quorum?)"));
  auto none = parse_only({});
  CHECK(none.exit_code == 64);
  CHECK_THAT(none.err, Contains("no command given (commands: quorum, order, safe-to-restart"));

  auto help = parse_only({"help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Contains("safe-to-restart") && Contains("Examples:") && Contains("Exit status:"));
  auto help_step = parse_only({"help", "step"});
  CHECK(help_step.exit_code == 0);
  CHECK_THAT(help_step.out, Contains("Usage: zkverify step") && Contains("--step-timeout"));
  CHECK(parse_only({"help", "stpe"}).err.find("did you mean step?") != std::string::npos);

  auto version = parse_only({"version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == "zkverify " ZKVERIFY_VERSION "\n");
  CHECK(parse_only({"--version"}).out == version.out);
}

TEST_CASE("cli: an unknown option is named before a missing required one, with the closest option") {
  auto typo = parse_only({"quorum", "--server", "127.0.0.1:1"});
  CHECK(typo.exit_code == 64);
  CHECK(typo.err == "zkverify quorum: unknown option --server (did you mean --servers?)\n");
  // In the order typed: the first unknown word is named, not the value after it.
  auto swapped = parse_only({"quorum", "--servers", "h:1", "--tiemout", "1s", "--outptu", "json"});
  CHECK(swapped.err == "zkverify quorum: unknown option --tiemout (did you mean --timeout?)\n");
  CHECK(parse_only({"quorum", "--tiemout=1s"}).err == swapped.err);
  CHECK_THAT(parse_only({"quorum", "--frobnicate"}).err, !Contains("did you mean"));
  CHECK_THAT(parse_only({"--servers", "h:1", "quorum"}).err, Contains("put the command first"));
}

TEST_CASE("cli: step's --refuse-at-risk needs --state, whose ledger keeps the last election") {
  auto without = parse_only({"step", "--servers", "a=h:1", "--restart", "a", "--refuse-at-risk", "--", "true"});
  CHECK(without.exit_code == 64);
  CHECK_THAT(without.err, Contains("--refuse-at-risk requires --state"));
}

TEST_CASE("cli: step's and roll's COMMAND only after --, and nothing after -- is parsed as zkverify's") {
  auto step = parse_only(
      {"step", "--servers", "a=h:1,b=h:2", "--restart", "a", "kubectl", "get", "pod", "a", "--output", "json"});
  CHECK(step.exit_code == 64);
  CHECK(step.err == "zkverify step: put COMMAND after --: zkverify step ... -- kubectl ...\n");
  auto roll = parse_only({"roll", "--servers", "a=h:1", "--state", "x.json", "kubectl", "--", "delete"});
  CHECK(roll.exit_code == 64);
  CHECK_THAT(roll.err, Contains("put COMMAND after --: zkverify roll ... -- kubectl ..."));

  // After --, even a word that is one of roll's options belongs to COMMAND: the plan stays text.
  FakeEnsemble ensemble;
  ScratchLedger state("cli");
  auto dry = run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", state.path.string(),
                                      "--dry-run", "--", "restart", "{}", "--output", "json"});
  INFO(dry.out << dry.err);
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out, !Contains("{\"") && Contains("pzoo-1"));
}

// The dry run's exit code is its answer: 0 only when the ensemble is healthy and every step is safe.
TEST_CASE("cli: roll --dry-run exits 1 when a step of its plan is not safe, and says which") {
  ScratchLedger state("cli-unsafe");
  SECTION("a healthy pair: either restart leaves one of two, short of a quorum") {
    FakeEnsemble pair({"a", "b"});
    auto quorum = run(pair.zookeeper, {"quorum", "--servers", pair.servers()});
    INFO(quorum.out << quorum.err);
    CHECK(quorum.exit_code == 0);  // healthy: the plan alone makes the dry run's answer 1
    auto dry = run(pair.zookeeper,
                   {"roll", "--servers", pair.servers(), "--state", state.path.string(), "--dry-run", "--", "true"});
    INFO(dry.out << dry.err);
    CHECK(dry.exit_code == 1);
    CHECK_THAT(dry.out, Contains("a quorum needs 2"));
  }
  SECTION("five, two of them not serving: the next restart would take the quorum") {
    FakeEnsemble five;
    for (std::size_t index : {1, 2})
      five.srvr_answers(index,
                        {::fake::Behaviour::answer, "This ZooKeeper instance is not currently serving requests\n"});
    auto dry = run(five.zookeeper,
                   {"roll", "--servers", five.servers(), "--state", state.path.string(), "--dry-run", "--", "true"});
    INFO(dry.out << dry.err);
    CHECK(dry.exit_code == 1);
    CHECK_THAT(dry.out, Contains("a quorum needs 3"));
  }
}

TEST_CASE("cli: server lists written as other tools write them are named") {
  auto said = [](const std::string& list) { return parse_only({"quorum", "--servers", list}).err; };
  CHECK_THAT(said("h:1 h:2"), Contains("separate servers with ','"));
  CHECK_THAT(said("zk://h:1"), Contains("no scheme: HOST:PORT"));
  CHECK_THAT(said("127.0.0.1:1/chroot"), Contains("a chroot path is not supported; use --namespace"));
  CHECK(parse_only({"quorum", "--servers", "h:1 h:2"}).exit_code == 64);
  CHECK(zkverify::parse_server_list("a:1, b:2").size() == 2);  // a space after the comma is fine
}

TEST_CASE("cli: durations as Go and Kubernetes write them, and zero is refused naming the flag") {
  auto zero = parse_only({"quorum", "--servers", "h:1", "--timeout", "0s"});
  CHECK(zero.exit_code == 64);
  CHECK(zero.err == "zkverify quorum: --timeout '0s' must be greater than 0\n");
  FakeEnsemble ensemble;
  auto ran = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--timeout", "1m30s"});
  INFO(ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--timeout", "2.5s"}).exit_code == 0);
}

// Only parsed here: listening on every address would leave loopback, which no test does.
TEST_CASE("cli: serve --ensemble is a name people group by, else a usage error naming the flag") {
  auto said = [](const std::string& name) {
    return parse_only({"serve", "--ensemble", name}).err;  // --servers missing: named after the values
  };
  CHECK(said("kafka/zk") == "zkverify serve: --ensemble 'kafka/zk': use letters, digits, '-', '_' or '.'\n");
  CHECK_THAT(said(""), Contains("--ensemble is empty"));
  CHECK_THAT(said(std::string(200, 'a')), Contains("longer than 128"));
  CHECK_THAT(said("kafka-prod_1.eu"), Contains("--servers is required"));  // a good name: what is missing is named
}

TEST_CASE("cli: serve --listen :PORT is every address, as Prometheus exporters take it") {
  auto every = zkverify::parse_listen(":9181");
  CHECK(every.host.empty());
  CHECK(every.port == 9181);
  CHECK_THAT(parse_only({"serve", "--servers", "h:1", "--listen", "9181"}).err, Contains("no port"));
}

TEST_CASE("cli: output files are checked before any probe: a directory is 64, a missing directory 74") {
  FakeEnsemble ensemble;
  auto dir = fs::temp_directory_path();
  auto missing = (dir / "zkverify-no-such-dir" / "x.xml").string();
  auto smoke_missing = run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--junit", missing});
  CHECK(smoke_missing.exit_code == 74);
  CHECK_THAT(smoke_missing.err, Contains("--junit '" + missing + "': cannot be written: no directory"));
  auto smoke_dir = run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--junit", dir.string()});
  CHECK(smoke_dir.exit_code == 64);
  CHECK_THAT(smoke_dir.err, Contains("--junit '" + dir.string() + "' is a directory"));
  auto state_dir = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--state", dir.string()});
  CHECK(state_dir.exit_code == 64);
  auto report = run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", (dir / "s.json").string(),
                                         "--report", missing, "--", "true"});
  CHECK(report.exit_code == 74);
  CHECK_THAT(report.err, Contains("--report '" + missing + "'"));
  CHECK(smoke_missing.out.empty());  // no case ran
  for (std::size_t server = 0; server < 5; ++server) CHECK(ensemble.srvr_asks(server) == 0);
}

TEST_CASE("cli: --wait is waited in full: the last pause is cut short, not the wait") {
  FakeEnsemble ensemble;
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // zoo-1 down: degraded, never healthy
  // A --timeout that a starved machine meets (a sanitizer build at nice 19 took 0.9 s to probe five
  // fakes: at 500 ms they were "unreachable"); what is asserted is when the attempts end, not how long
  // each one takes.
  auto ran = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--wait", "2s", "--interval", "1s",
                                      "--timeout", "3s", "--no-write"});
  INFO(ran.err);
  CHECK(ran.exit_code == 1);
  // Attempts about a second apart, and one at the end of --wait: the last pause was cut short.
  CHECK(lines_with(ran.err, "] attempt ") >= 2);
  CHECK(last_seconds(ran.err, "] attempt ") >= 2.0);
  CHECK_THAT(ran.err, Contains("--wait 2.0s is over"));

  auto smoke = run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--wait", "2s", "--timeout", "3s"});
  INFO(smoke.err);
  CHECK(smoke.exit_code == 2);
  CHECK(lines_with(smoke.err, "waiting for the ensemble:") >= 2);
  CHECK(last_seconds(smoke.err, "waiting for the ensemble:") >= 2.0);
}

TEST_CASE("cli: watch --timeout bounds its start") {
  zkverify::fake::Ensemble zookeeper;
  zookeeper.inject({"", zkverify::fake::OpKind::connect, zkverify::fake::Fault::never_complete, 0, ""});
  auto started = std::chrono::steady_clock::now();
  auto ran = run(zookeeper, {"watch", "--servers", "a=127.0.0.1:1", "--duration", "3s", "--timeout", "1s"});
  auto took = std::chrono::steady_clock::now() - started;
  INFO(ran.err);
  CHECK(ran.exit_code == 2);
  CHECK_THAT(ran.err, Contains("zkverify watch: cannot start"));
  CHECK(took < std::chrono::seconds(8));  // the default start deadline is 10 s; this one is 1 s
}

TEST_CASE("cli: an unnamed server is not named twice, and counts of one are singular") {
  loopback::RefusingPort down;
  auto address = "127.0.0.1:" + std::to_string(down.port());
  auto ran = parse_only({"quorum", "--servers", address, "--timeout", "1s"});
  INFO(ran.out);
  CHECK(ran.exit_code == 2);
  CHECK_THAT(ran.out, Contains(address + ": ") && !Contains(address + " (" + address + ")"));
  CHECK_THAT(ran.out, Contains("1 voter: the 1 server listed less 0 observers") && !Contains("1 voters:"));
}

TEST_CASE("cli: --timeout on step and roll keeps its old meaning for a release, with a warning") {
  FakeEnsemble ensemble;
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // degraded: the step is refused, quickly
  auto old = run(ensemble.zookeeper,
                 {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--timeout", "5s", "--", "true"});
  CHECK(old.exit_code == 1);
  CHECK_THAT(old.err, Contains("warning: --timeout is deprecated here") && Contains("use --step-timeout"));
  auto both = parse_only(
      {"step", "--servers", "a=h:1", "--restart", "a", "--timeout", "5s", "--step-timeout", "5s", "--", "true"});
  CHECK(both.exit_code == 64);
  auto fresh = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "zoo-0", "--step-timeout",
                                        "5s", "--", "true"});
  CHECK(fresh.exit_code == 1);
  CHECK_THAT(fresh.err, !Contains("deprecated"));
}

TEST_CASE("cli: every command's help has examples, exit codes and typed placeholders, under the name zkverify") {
  for (const char* command :
       {"quorum", "order", "safe-to-restart", "plan", "watch", "step", "roll", "serve", "probe", "smoke"}) {
    zkverify::fake::Ensemble zookeeper;
    std::ostringstream out, err;
    const char* argv[] = {"/opt/weird/path/zkverify-bin", command, "--help"};
    zkverify::verifier::Context context{test_executor(), zookeeper.factory(), out, err};
    CHECK(zkverify::verifier::run_command_line(3, argv, context) == 0);
    auto help = out.str();
    INFO(command << ":\n" << help);
    CHECK_THAT(help, Contains(std::string("Usage: zkverify ") + command) && !Contains("weird"));
    CHECK_THAT(help, Contains("Examples:\n  $ ") && Contains("\nExit status:\n  0 ") && Contains("  64  usage error"));
    CHECK_THAT(help, Contains("  70  internal error") && Contains("[NAME=]HOST:PORT,..."));
    CHECK_THAT(help, !Contains(" TEXT"));
  }
}

TEST_CASE("cli: --zoo-cfg lists the servers instead of --servers, one of the two and not both") {
  FakeEnsemble ensemble;
  std::string config = "tickTime=2000\n";
  int id = 0;
  for (const auto& server : zkverify::parse_server_list(ensemble.servers()))
    config += "server." + std::to_string(++id) + "=127.0.0.1:2888:3888:participant;" + server.endpoint() + "\n";
  auto path = fs::temp_directory_path() / ("cli-zoo-" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(path) << config;
  auto by_config = run(ensemble.zookeeper, {"quorum", "--zoo-cfg", path.string(), "--no-write", "--output", "json"});
  auto by_list = run(ensemble.zookeeper, {"quorum", "--servers", ensemble.servers(), "--no-write", "--output", "json"});
  INFO(by_config.out << by_config.err);
  CHECK(by_config.exit_code == by_list.exit_code);
  auto report = by_config.json();
  REQUIRE(report["servers"].size() == 5);
  CHECK(report["servers"][0]["name"] == "server.1");
  CHECK(report["serving_voters"] == 5);
  CHECK(report["expected_voters"] == 5);
  CHECK_THAT(by_config.out, Contains("5 voters: the participants of the configuration --zoo-cfg read"));

  auto both = parse_only({"quorum", "--servers", ensemble.servers(), "--zoo-cfg", path.string()});
  CHECK(both.exit_code == 64);
  CHECK_THAT(both.err, Contains("--servers excludes --zoo-cfg"));
  auto neither = parse_only({"quorum", "--timeout", "1s"});
  CHECK(neither.exit_code == 64);
  CHECK(neither.err == "zkverify: --servers is required (or --zoo-cfg FILE) (see --help)\n");
  // --zoo-cfg=FILE is the same; after -- it is COMMAND's, not ours.
  auto equals = run(ensemble.zookeeper, {"quorum", "--zoo-cfg=" + path.string(), "--no-write", "--output", "json"});
  CHECK(equals.exit_code == by_config.exit_code);
  auto commands = parse_only({"step", "--restart", "a", "--", "x", "--zoo-cfg", path.string()});
  CHECK(commands.exit_code == 64);
  CHECK_THAT(commands.err, Contains("--servers is required"));
  auto unreadable = parse_only({"order", "--zoo-cfg", "/nonexistent/zoo.cfg"});
  CHECK(unreadable.exit_code == 64);
  CHECK_THAT(unreadable.err, Contains("--zoo-cfg: cannot read '/nonexistent/zoo.cfg'"));
  // --to (the list a server or the ensemble moves to) names itself, and a list without voters.
  auto to_unreadable =
      parse_only({"safe-to-restart", "a", "--servers", "a=127.0.0.1:1", "--to", "/nonexistent/zoo.cfg"});
  CHECK(to_unreadable.exit_code == 64);
  CHECK_THAT(to_unreadable.err, Contains("--to: cannot read '/nonexistent/zoo.cfg'"));
  auto observers_only = fs::temp_directory_path() / ("cli-observers-" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(observers_only) << "clientPort=2181\nserver.1=a:2888:3888:observer\n";
  auto no_voters = parse_only({"plan", "--servers", "a=127.0.0.1:1", "--to", observers_only.string()});
  CHECK(no_voters.exit_code == 64);
  CHECK_THAT(no_voters.err, Contains("no server.N line names a voter"));
  fs::remove(observers_only);
  fs::remove(path);
}

namespace {

// A fake ensemble that answers srvr only (no server reports its list, as 3.4 does not) and zoo.cfg
// files naming it: five.cfg its five servers, six.cfg and seven.cfg one and two more voters (never
// dialled: the servers come from FILE).
struct HeldLists {
  FakeEnsemble ensemble;
  ListFiles lists{ensemble, "cli-held"};
  const std::string &five = lists.five, &six = lists.six, &seven = lists.seven;
  Ran run(std::vector<std::string> args) { return command_line::run(ensemble.zookeeper, std::move(args)); }
};

}  // namespace

TEST_CASE("cli: --zoo-cfg gives the lists servers that report none hold: FILE's for all, NAME=FILE's for NAME") {
  HeldLists held;
  auto one = held.run({"quorum", "--zoo-cfg", held.five, "--no-write", "--output", "json"});
  INFO(one.out << one.err);
  auto views = one.json()["membership_views"];
  REQUIRE(views.size() == 1);
  CHECK(views[0]["voters"] == nlohmann::json::array({1, 2, 3, 4, 5}));
  CHECK(views[0]["given"].size() == 5);  // every holder's list is the file's, not its own word
  CHECK(one.json()["expected_voters"] == 5);

  // server.4 and server.5 restarted on the 7-list: {1,2,3} of the 5-list and {4,5,6,7} of the 7-list.
  auto split = held.run({"quorum", "--zoo-cfg", held.five, "--zoo-cfg", "server.4=" + held.seven, "--zoo-cfg",
                         "server.5=" + held.seven, "--no-write"});
  INFO(split.out << split.err);
  CHECK(split.exit_code == 2);
  CHECK_THAT(split.out, Contains("split-brain-possible") && Contains("by --zoo-cfg for server.4, server.5"));
  // The same, order first: NAME=FILE wins over FILE whatever their order on the line.
  auto reordered = held.run({"order", "--zoo-cfg", "server.4=" + held.seven, "--zoo-cfg", "server.5=" + held.seven,
                             "--zoo-cfg", held.five, "--output", "json"});
  CHECK(reordered.json()["verdict"] == "critical");

  // order --to from the given lists: a step onto the 7-list could split; onto a 6-list none could.
  auto refused = held.run({"order", "--zoo-cfg", held.five, "--to", held.seven});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(std::ranges::count(refused.out, '\n') == 5);  // the order is still printed
  CHECK_THAT(refused.err, Contains("in this order onto --to's list is not safe") && Contains("share no server"));
  CHECK(held.run({"order", "--zoo-cfg", held.five, "--to", held.six}).exit_code == 0);
  CHECK(held.run({"order", "--servers", held.ensemble.servers(), "--to", held.six}).exit_code == 1);  // unknown
}

TEST_CASE("cli: --zoo-cfg NAME=FILE names a listed server, beside one FILE, on the gates only") {
  HeldLists held;
  auto unlisted = parse_only({"quorum", "--zoo-cfg", held.five, "--zoo-cfg", "zoo-9=" + held.seven});
  CHECK(unlisted.exit_code == 64);
  CHECK_THAT(unlisted.err, Contains("--zoo-cfg 'zoo-9' is not in --servers"));
  auto alone = parse_only({"quorum", "--zoo-cfg", "server.4=" + held.seven});
  CHECK(alone.exit_code == 64);
  CHECK_THAT(alone.err, Contains("--zoo-cfg NAME=FILE gives one server's list beside --zoo-cfg FILE"));
  auto twice = parse_only({"quorum", "--zoo-cfg", held.five, "--zoo-cfg", held.seven});
  CHECK(twice.exit_code == 64);
  CHECK_THAT(twice.err, Contains("--zoo-cfg FILE given twice"));
  auto not_a_gate = parse_only({"watch", "--zoo-cfg", held.five, "--zoo-cfg", "server.4=" + held.seven});
  CHECK(not_a_gate.exit_code == 64);
  CHECK_THAT(not_a_gate.err,
             Contains("a server's own list (NAME=FILE) is for quorum, safe-to-restart, order, plan, step and roll"));
  auto missing = parse_only({"quorum", "--zoo-cfg", held.five, "--zoo-cfg", "server.4=/nonexistent/zoo.cfg"});
  CHECK(missing.exit_code == 64);
  CHECK_THAT(missing.err, Contains("cannot read '/nonexistent/zoo.cfg'"));
}

TEST_CASE("cli: plan reads the servers' lists, and where no server reports one (ruok-only) it says why, exit 1") {
  FakeEnsemble ensemble;
  auto target = fs::temp_directory_path() / ("cli-plan-" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(target) << "clientPort=2181\n"
                        << "server.1=pzoo-0.pzoo:2888:3888\nserver.2=pzoo-1.pzoo:2888:3888\n"
                        << "server.3=pzoo-2.pzoo:2888:3888\nserver.4=zoo-0.zoo:2888:3888\n"
                        << "server.5=zoo-1.zoo:2888:3888\nserver.6=zoo-2.zoo:2888:3888\n";
  auto planned = run(ensemble.zookeeper, {"plan", "--servers", ensemble.servers(), "--to", target.string()});
  INFO(planned.out << planned.err);
  CHECK(planned.exit_code == 1);
  CHECK_THAT(planned.out, Contains("no plan: no server reported the list it holds"));
  auto as_json =
      run(ensemble.zookeeper, {"plan", "--servers", ensemble.servers(), "--to", target.string(), "--output", "json"});
  CHECK(as_json.json()["to"] == nlohmann::json({1, 2, 3, 4, 5, 6}));
  CHECK(as_json.json()["steps"].empty());
  CHECK(ensemble.zookeeper.sessions_opened() == 0);  // it reads, it does not write
  fs::remove(target);
}

TEST_CASE("cli: step --to and roll --to look one step ahead: where no server reports its list, nothing is restarted") {
  FakeEnsemble ensemble;  // ruok-only: conf refused, so no list to compare the new one with
  auto target = fs::temp_directory_path() / ("cli-step-to-" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(target) << "clientPort=2181\nserver.1=a:2888:3888\nserver.2=b:2888:3888\nserver.3=c:2888:3888\n";
  auto marker = fs::temp_directory_path() / ("cli-step-to-ran-" + std::to_string(::getpid()));
  auto step = run(ensemble.zookeeper, {"step", "--servers", ensemble.servers(), "--restart", "pzoo-0", "--to",
                                       target.string(), "--", "touch", marker.string()});
  INFO(step.out << step.err);
  CHECK(step.exit_code == 1);
  CHECK_THAT(step.out + step.err, Contains("no server reported the list it holds"));
  CHECK_FALSE(fs::exists(marker));
  auto state = fs::temp_directory_path() / ("cli-roll-to-" + std::to_string(::getpid()) + ".json");
  auto roll = run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", state.string(), "--to",
                                       target.string(), "--", "touch", marker.string()});
  INFO(roll.out << roll.err);
  CHECK(roll.exit_code == 1);
  CHECK_THAT(roll.out + roll.err, Contains("no server reported the list it holds"));
  CHECK_FALSE(fs::exists(marker));
  auto unreadable = parse_only(
      {"roll", "--servers", "a=127.0.0.1:1", "--state", state.string(), "--to", "/nonexistent/zoo.cfg", "--", "true"});
  CHECK(unreadable.exit_code == 64);
  CHECK_THAT(unreadable.err, Contains("--to: cannot read '/nonexistent/zoo.cfg'"));
  fs::remove(target);
  fs::remove(state);
  fs::remove(state.string() + ".lock");  // the ledger's lock, beside it
}
