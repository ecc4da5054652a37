// zkverify quorum against a real 5-server ZooKeeper 3.8.0 ensemble (tests/lab/zklab).

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sstream>

#include <catch2/catch.hpp>

#include "../unit/fake_peer.hpp"
#include "../unit/loopback_port.hpp"
#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

std::string quorum_json(const lab::Lab& ensemble, const std::string& extra = "") {
  return "quorum --servers " + ensemble.servers() + " --output json " + extra;
}

// Re-runs `zkverify quorum` until `done(report)` or 30 s have passed; returns the last run.
template <class Done>
lab::Run poll(const std::string& args, Done done) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto run = zkverify(args);
    if (done(run) || std::chrono::steady_clock::now() > give_up) return run;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

// A server that answers srvr (as a follower of the lab's first epoch), then stalls on mntr and on
// everything else, the handshake too: judged by srvr, in time.
void check_srvr_then_stall(const lab::Lab& ensemble) {
  fake::Peer stalls_after_srvr(
      {{"srvr",
        {fake::Behaviour::answer,
         "Zookeeper version: 3.8.0-fake, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: 0/0.0/0\n"
         "Received: 1\nSent: 1\nConnections: 1\nOutstanding: 0\nZxid: 0x100000000\nMode: follower\n"
         "Node count: 5\n"}}},
      {fake::Behaviour::stall, ""});
  auto second = zkverify("quorum --output json --timeout 2s --servers " + ensemble.servers() +
                         ",staller=127.0.0.1:" + std::to_string(stalls_after_srvr.port()));
  INFO(second);
  CHECK(second.elapsed <= std::chrono::milliseconds(2000 + 200 + 200));
  // It serves, by srvr, so the round trip reads through it: its handshake stalls, while the five
  // real servers read the write back (degraded: read-back-failed).
  CHECK(second.exit_code == 1);
  REQUIRE(lab::find_finding(second.json(), "read-back-failed"));
  CHECK((*lab::find_finding(second.json(), "read-back-failed"))["server"] == "staller");
  const auto& with_staller = second.json();
  REQUIRE(with_staller["servers"].size() == 6);
  CHECK(with_staller["servers"][5]["mode"] == "follower");  // srvr's answer stands
  CHECK(with_staller["servers"][5]["error"].is_null());
  CHECK(stalls_after_srvr.connections() >= 2);  // srvr, then mntr, which stalled
  for (std::size_t i = 0; i < 5; ++i) CHECK(with_staller["servers"][i]["error"].is_null());
  CHECK(with_staller["round_trip"]["reads_ok"] == 5);
}

// Every row of a healthy report: no error, the mode the leader implies, the write's zxid, ids 1-5.
void check_healthy_rows(const nlohmann::json& report, const std::string& leader) {
  REQUIRE(report["servers"].size() == 5);
  std::vector<int> ids;
  for (const auto& server : report["servers"]) {
    CHECK(server["error"].is_null());
    CHECK(server["mode"] == (server["name"] == leader ? "leader" : "follower"));
    CHECK(server["zxid"] == report["round_trip"]["write_zxid"]);  // every server reached the write
    ids.push_back(server["id"].get<int>());
  }
  CHECK(ids == std::vector<int>{1, 2, 3, 4, 5});  // pzoo-0..2 are 1-3, zoo-0..1 are 4-5
}

void check_timings(const nlohmann::json& timings) {
  CHECK(timings["total"].get<long>() > 0);
  for (const char* phase : {"probe", "connect", "write", "read_back", "cleanup"}) {
    INFO(phase);
    CHECK(timings[phase].is_number_integer());
    CHECK(timings[phase] <= timings["total"]);
  }
}

// One --admin-port for all servers, bound and never listening: each server's AdminServer request is
// refused, and each says so.
void check_one_refusing_admin_port(const lab::Lab& ensemble) {
  // One port for all servers: each asks a port that is bound and never listens, and says so.
  loopback::RefusingPort refusing;
  auto refusing_port = std::to_string(refusing.port());
  auto one_port = zkverify(quorum_json(ensemble, "--admin-port " + refusing_port));
  INFO(one_port);
  int unavailable = 0;
  for (const auto& finding : one_port.json()["findings"])
    if (finding["code"] == "admin-unavailable") {
      ++unavailable;
      CHECK_THAT(finding["message"].get<std::string>(),
                 Contains("AdminServer 127.0.0.1:" + refusing_port + " /commands/"));
    }
  CHECK(unavailable == 5);
}

// --zoo-cfg: the same ensemble from pzoo-0's own zoo.cfg, its IP hosts named server.1..5.
void check_zoo_cfg(const lab::Lab& ensemble) {
  auto from_config = zkverify("quorum --output json --zoo-cfg " + ensemble.dir() + "/pzoo-0/zoo.cfg");
  INFO(from_config);
  CHECK(from_config.exit_code == 0);
  CHECK(from_config.json()["servers"][0]["name"] == "server.1");
  CHECK(from_config.json()["round_trip"]["reads_ok"] == 5);
  // The file's list is the one each server reports (conf): one view, no holder's list taken from the file.
  REQUIRE(from_config.json()["membership_views"].size() == 1);
  CHECK(from_config.json()["membership_views"][0]["given"].empty());
  CHECK(from_config.json()["membership_views"][0]["holders"].size() == 5);
}

}  // namespace

// --trace: text ends with the timeline, a line a step, among them each server's srvr connection and read.
void check_trace_text(const lab::Lab& ensemble, const nlohmann::json& report) {
  auto traced = zkverify("quorum --trace --servers " + ensemble.servers()).out;
  CHECK_THAT(traced, Contains("\ntimeline (ms from the start): "));
  for (const auto& server : report["servers"]) {
    auto name = server["name"].get<std::string>();
    INFO(name << "\n" << traced);
    std::istringstream lines(traced);
    bool connect = false, read = false;
    for (std::string line; std::getline(lines, line);) {
      bool its = line.find("  " + name + " ") != std::string::npos;
      connect = connect || (its && line.ends_with("  srvr: connect"));
      read = read || (its && line.ends_with("  session: sync and read"));
    }
    CHECK((connect && read));
  }
}

TEST_CASE("healthy five servers: exit 0, the leader the servers name, all rows filled", "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());

  auto run = zkverify(quorum_json(ensemble));
  INFO(run);
  CHECK(run.exit_code == 0);
  auto report = run.json();
  CHECK(report["verdict"] == "healthy");
  CHECK(report["leader"] == leader);
  CHECK(report["serving_voters"] == 5);
  check_healthy_rows(report, leader);
  CHECK(report["round_trip"]["reads_ok"] == 5);
  check_timings(report["timings_ms"]);
  check_zoo_cfg(ensemble);

  SECTION("text output names every server and the leader") {
    auto text = zkverify("quorum --servers " + ensemble.servers());
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Contains("healthy: leader " + leader + ", 5/5 voters serving"));
    // One table row per server: its name, then (after id) its mode.
    for (const auto& server : report["servers"]) {
      auto name = server["name"].get<std::string>();
      std::string mode = name == leader ? " leader " : " follower ";
      INFO(name);
      std::istringstream lines(text.out);
      bool row = false;
      for (std::string line; std::getline(lines, line);)
        row = row || (line.starts_with(name + " ") && line.find(mode) != std::string::npos);
      CHECK(row);
    }
  }
  SECTION("--verbose: text ends with where the time went") {
    auto text = zkverify("quorum --verbose --servers " + ensemble.servers());
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Contains("\ntimings: probe ") && Contains(" cleanup ") && Contains(" total "));
    CHECK_THAT(zkverify("quorum --servers " + ensemble.servers()).out, !Contains("timings:"));
    check_trace_text(ensemble, report);
  }
  SECTION("--no-write says so and still judges") {
    auto quiet = zkverify(quorum_json(ensemble, "--no-write"));
    CHECK(quiet.exit_code == 0);
    CHECK(lab::find_finding(quiet.json(), "write-skipped"));
    CHECK(quiet.json()["round_trip"].is_null());
  }
  SECTION("nothing is left behind: after round trips only the namespace node is new") {
    // The first run above already created the namespace; a fresh server has 5 nodes of its own
    // (/, /zookeeper and its children), so one more is the namespace /zkverify, and nothing else.
    auto node_counts = [&] {
      std::vector<std::int64_t> counts;
      auto report_now = zkverify(quorum_json(ensemble, "--no-write")).json();
      for (const auto& server : report_now["servers"]) counts.push_back(server["node_count"].get<std::int64_t>());
      return counts;
    };
    for (int i = 0; i < 3; ++i) REQUIRE(zkverify(quorum_json(ensemble)).exit_code == 0);
    CHECK(node_counts() == std::vector<std::int64_t>(5, 6));
  }
}

TEST_CASE("the leader killed: degraded, and the new leader named once elected", "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  auto old_leader = ensemble.leader();
  REQUIRE_FALSE(old_leader.empty());
  ensemble.act("kill", old_leader);

  // Until a new leader is elected and its followers have synced with it (critical until then).
  auto run = poll(quorum_json(ensemble), [&](const lab::Run& r) {
    auto report = nlohmann::json::parse(r.out, nullptr, false);
    return !report.is_discarded() && report["leader"].is_string() && r.exit_code != 2;
  });
  INFO(run);
  CHECK(run.exit_code == 1);
  auto report = run.json();
  CHECK(report["verdict"] == "degraded");
  CHECK(report["leader"] != old_leader);
  CHECK(report["leader"] == ensemble.leader());
  REQUIRE(lab::find_finding(report, "unreachable"));
  CHECK((*lab::find_finding(report, "unreachable"))["server"] == old_leader);
  CHECK(report["round_trip"]["reads_ok"] == 4);
}

TEST_CASE("three of five down: critical within the deadline", "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2"}) ensemble.act("stop", name);

  auto run = zkverify(quorum_json(ensemble, "--timeout 2s"));
  INFO(run);
  CHECK(run.exit_code == 2);
  auto report = run.json();
  CHECK(report["verdict"] == "critical");
  CHECK(report["leader"].is_null());
  REQUIRE(lab::find_finding(report, "no-quorum"));
  CHECK_THAT((*lab::find_finding(report, "no-quorum"))["message"].get<std::string>(), Contains("a quorum needs 3"));
  CHECK(report["servers"][3]["mode"] == "not-serving");
  CHECK(run.elapsed < std::chrono::milliseconds(2000 + 1500));  // the deadline, plus process start and exit
}

TEST_CASE("one server paused (SIGSTOP), --timeout 1s: answers in time and names it", "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  std::string paused = ensemble.leader() == "zoo-0" ? "zoo-1" : "zoo-0";
  ensemble.act("pause", paused);

  auto run = zkverify(quorum_json(ensemble, "--timeout 1s"));
  ensemble.act("resume", paused);
  INFO(run);
  CHECK(run.exit_code == 1);
  auto report = run.json();
  REQUIRE(lab::find_finding(report, "unreachable"));
  CHECK((*lab::find_finding(report, "unreachable"))["server"] == paused);
  CHECK_THAT((*lab::find_finding(report, "unreachable"))["message"].get<std::string>(),
             Contains("no reply within the deadline"));
  CHECK(report["round_trip"]["reads_ok"] == 4);
  CHECK(run.elapsed < std::chrono::milliseconds(1000 + 1500));
}

TEST_CASE("whitelist 'ruok' only (kubernetes-kafka's): srvr alone decides correctly",
          "[integration][promises][part:shapes]") {
  auto& ensemble = lab::shared("ruok");
  auto run = zkverify(quorum_json(ensemble));
  INFO(run);
  CHECK(run.exit_code == 0);
  auto report = run.json();
  CHECK(report["leader"] == ensemble.leader());
  std::vector<int> ids;  // from the session ids: pzoo-0..2 are 1-3, zoo-0..1 are 4-5
  for (const auto& server : report["servers"]) ids.push_back(server["id"].is_number() ? server["id"].get<int>() : 0);
  CHECK(ids == std::vector<int>{1, 2, 3, 4, 5});
  REQUIRE(lab::find_finding(report, "not-whitelisted"));
  CHECK_THAT((*lab::find_finding(report, "not-whitelisted"))["message"].get<std::string>(),
             Contains("4lw.commands.whitelist=srvr,ruok,mntr,conf,isro"));

  SECTION("the AdminServer fills in what the whitelist hides") {
    auto admin = zkverify(quorum_json(ensemble, "--admin-port " + ensemble.admin_ports()));
    INFO(admin);
    CHECK(admin.exit_code == 0);
    auto with_admin = admin.json();
    CHECK_FALSE(lab::find_finding(with_admin, "admin-unavailable"));
    for (const auto& server : with_admin["servers"])
      if (server["mode"] == "leader") CHECK(server["note"] == "synced followers 4/4");  // monitor, over HTTP

    // Four of the five listed: only the AdminServer's voting_view knows there are five voters (the
    // whitelist hides conf and mntr; the list alone says four) and that id 5 is not listed.
    auto servers = ensemble.servers(), ports = ensemble.admin_ports();
    auto four_servers = servers.substr(0, servers.rfind(','));
    auto four_ports = ports.substr(0, ports.rfind(','));
    auto four = zkverify("quorum --output json --servers " + four_servers + " --admin-port " + four_ports);
    INFO(four);
    CHECK(four.exit_code == 1);
    CHECK(four.json()["expected_voters"] == 5);
    REQUIRE(lab::find_finding(four.json(), "membership-unlisted"));
    CHECK_THAT((*lab::find_finding(four.json(), "membership-unlisted"))["message"].get<std::string>(),
               Contains("ids not listed: 5"));
    CHECK_FALSE(lab::find_finding(four.json(), "voters-counted"));

    check_one_refusing_admin_port(ensemble);
  }
  SECTION("and a lost follower is still seen") {
    auto stopped = ensemble.leader() == "pzoo-2" ? "pzoo-1" : "pzoo-2";
    ensemble.act("stop", stopped);
    auto lost = zkverify(quorum_json(ensemble));
    INFO(lost);
    CHECK(lost.exit_code == 1);
    CHECK(lost.json()["serving_voters"] == 4);
    CHECK(lost.json()["expected_voters"] == 5);
    REQUIRE(lab::find_finding(lost.json(), "unreachable"));
    CHECK((*lab::find_finding(lost.json(), "unreachable"))["server"] == stopped);
  }
}

// Beside the ruok-only case, on its lab (the sidecar's probe, moved here from sidecar_test.cpp so that
// the part starts that lab once).
TEST_CASE("probe --no-write where mntr is refused: the AdminServer's zabstate is the sync proof",
          "[integration][sidecar][part:shapes]") {
  // The ruok-only lab: srvr is allowed whatever the whitelist says (ZooKeeper adds it), so it refuses
  // mntr as the "ruok,srvr" whitelist this case had does.
  auto& ensemble = lab::shared("ruok");
  auto probe = [&](const std::string& local) {
    return lab::zkverify("probe --servers " + ensemble.servers() + " --admin-port " + ensemble.admin_ports() +
                         " --local " + local + " --no-write --timeout 3s");
  };
  auto follower = ensemble.leader() == "pzoo-0" ? std::string("pzoo-1") : std::string("pzoo-0");
  auto ready = probe(follower);
  INFO(ready);
  CHECK(ready.exit_code == 0);
  CHECK_THAT(ready.out, Contains("sync proof: AdminServer's zabstate"));
  // Without the admin ports, the same probe has only srvr's mode to go on, and says so.
  auto weaker = lab::zkverify("probe --servers " + ensemble.servers() + " --local " + follower + " --no-write");
  CHECK(weaker.exit_code == 0);
  CHECK_THAT(weaker.out, Contains("sync proof: srvr mode only"));
}

TEST_CASE("fake peers beside a real ensemble: their errors are clear, the real servers still judged",
          "[integration][promises][part:quorum]") {
  auto& ensemble = lab::shared();
  fake::Peer garbage({}, {fake::Behaviour::answer, "\x16\x03\x01garbage"});
  fake::Peer silent({}, {fake::Behaviour::stall, ""});
  fake::Peer flood({}, {fake::Behaviour::flood, ""});
  fake::Peer drip({}, {fake::Behaviour::drip, ""});
  fake::Peer reset({}, {fake::Behaviour::reset, "Zookeeper version: 3.8.0"});
  fake::Unaccepting unaccepting;
  auto at = [](const char* name, std::uint16_t port) {
    return std::string(",") + name + "=127.0.0.1:" + std::to_string(port);
  };
  auto list = ensemble.servers() + at("garbage", garbage.port()) + at("silent", silent.port()) +
              at("flood", flood.port()) + at("drip", drip.port()) + at("reset", reset.port()) +
              at("unaccepting", unaccepting.port()) + ",nowhere=zkverify-test.invalid:2181";

  // "The command answers within it whatever the servers do": the deadline, plus 10% and 200ms for
  // starting and stopping a process.
  auto run = zkverify("quorum --output json --timeout 2s --servers " + list);
  INFO(run);
  CHECK(run.elapsed <= std::chrono::milliseconds(2000 + 200 + 200));
  CHECK(run.exit_code == 1);
  auto report = run.json();
  CHECK(report["leader"] == ensemble.leader());
  CHECK(report["expected_voters"] == 5);  // from the real servers' membership
  CHECK(report["serving_voters"] == 5);
  const auto& rows = report["servers"];
  REQUIRE(rows.size() == 12);
  for (std::size_t i = 5; i < 12; ++i) CHECK(rows[i]["zxid"].is_null());
  CHECK(rows[5]["mode"] == "bad-reply");
  CHECK_THAT(rows[5]["error"].get<std::string>(), Contains("not srvr output"));
  CHECK(rows[6]["error"] == "connected, but no reply within the deadline");
  CHECK_THAT(rows[7]["error"].get<std::string>(), Contains("reply exceeded"));
  CHECK_THAT(rows[8]["error"].get<std::string>(), Contains("reply did not end within the deadline"));
  CHECK_THAT(rows[9]["error"].get<std::string>(), Contains("connection failed: ") && Contains("reset"));
  CHECK(rows[10]["error"] == "no TCP connection within the deadline");
  CHECK_THAT(rows[11]["error"].get<std::string>(),
             Contains("cannot resolve host") && Contains("zkverify-test.invalid"));
  for (std::size_t i = 5; i < 12; ++i) {
    INFO(rows[i]["name"]);
    CHECK(rows[i]["mode"] == (i == 5 ? "bad-reply" : "unreachable"));
    bool named = false;
    for (const auto& finding : report["findings"]) named = named || finding["server"] == rows[i]["name"];
    CHECK(named);
  }
  CHECK(report["round_trip"]["reads_ok"] == 5);
  CHECK(report["round_trip"]["reads_attempted"] == 5);  // none of them serves: no session is opened to it

  check_srvr_then_stall(ensemble);
}

TEST_CASE("usage errors exit 64 with one line naming the problem", "[integration][promises][part:cli]") {
  struct Case {
    std::string args, says;
  };
  for (const auto& [args, says] : std::vector<Case>{
           {"quorum --servers 127.0.0.1", "has no port"},
           {"quorum --servers a:1 --timeout 5", "'5' is not a duration"},
           {"quorum --servers a:1 --output yaml", "--output 'yaml'"},
           {"quorum --servers a:1 --namespace zk", "absolute"},
           {"quorum", "servers is required"},
           {"quorum --servers a:1 --bogus", "bogus"},
           {"", "no command given"},
           {"quorom --servers a:1", "unknown command 'quorom' (did you mean quorum?)"},
           {"quorum --server a:1", "unknown option --server (did you mean --servers?)"},
           {"step --servers a:1 --restart a:1 kubectl -- true", "put COMMAND after --"},
           {"watch --servers a:1 --rate 0", "--rate 0"},
           {"watch --servers a:1 --duration soon", "'soon' is not a duration"},
           {"step --servers a:1 --restart b -- true", "--restart 'b' is not in --servers"},
           {"step --servers a:1 --restart a:1 --rate 5000 -- true", "--rate 5000"},
           {"step --servers a:1 --restart a:1", "no COMMAND"},
           {"safe-to-restart x --servers a:1", "'x' is not in --servers"},
       }) {
    auto run = zkverify(args);
    INFO(args << " -> " << run.err);
    CHECK(run.exit_code == 64);
    CHECK_THAT(run.err, Contains(says));
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
    CHECK(run.out.empty());
  }
  auto version = zkverify("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out == "zkverify " + std::string(ZKVERIFY_VERSION) + "\n");
  for (const char* command : {"quorum", "order", "safe-to-restart", "watch", "step"}) {
    auto help = zkverify(std::string(command) + " --help");
    INFO(command << ": " << help.out << help.err);
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Contains(command) && Contains("--servers") && Contains("--help"));
  }
}

TEST_CASE("usage errors of --admin-port and order: 64 naming the problem", "[integration][promises][part:cli]") {
  struct Case {
    std::string args, says;
  };
  for (const auto& [args, says] : std::vector<Case>{
           {"quorum --servers a:1,b:1,c:1 --admin-port 8080,8081",
            "--admin-port takes one port or one per server (3 servers, 2 ports given)"},
           {"quorum --servers a:1 --admin-port 0", "--admin-port: '0' is not a port"},
           {"order --servers 127.0.0.1", "has no port"},
           {"order --servers a:1 --output yaml", "--output 'yaml'"},
           {"order", "servers is required"},
       }) {
    auto run = zkverify(args);
    INFO(args << " -> " << run.err);
    CHECK(run.exit_code == 64);
    CHECK_THAT(run.err, Contains(says));
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
    CHECK(run.out.empty());
  }
}

namespace {

// A temporary directory of the case's own while it lives (TMPDIR, which the lab's scratch directory
// goes under): the parts that run beside it (ctest -j 2) make and remove their own scratch
// directories in the shared one, and a listing of that one raced them (e5e01c1's fresh clone).
class PrivateTmpdir {
 public:
  PrivateTmpdir() {
    const char* shared = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): no other thread runs here
    old_ = shared ? std::optional<std::string>(shared) : std::nullopt;
    dir_ = std::filesystem::temp_directory_path() / ("zkverify-private-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ::setenv("TMPDIR", dir_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ~PrivateTmpdir() {
    if (old_) ::setenv("TMPDIR", old_->c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    else ::unsetenv("TMPDIR");                       // NOLINT(concurrency-mt-unsafe)
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  PrivateTmpdir(const PrivateTmpdir&) = delete;
  PrivateTmpdir& operator=(const PrivateTmpdir&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::optional<std::string> old_;
  std::filesystem::path dir_;
};

}  // namespace

// A Lab whose `zklab up` fails is never made, so no destructor cleans up after it: its constructor
// does (no server was started here: up refuses the option before any starts).
TEST_CASE("a lab that cannot start leaves no scratch directory behind", "[integration][part:cli]") {
  PrivateTmpdir tmp;
  CHECK_THROWS_WITH(lab::Lab("", "--members 99"), Catch::Matchers::Contains("--members takes a whole number"));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(tmp.dir()))
    if (entry.path().filename().string().starts_with("zkverify-test-")) left.push_back(entry.path().string());
  CHECK(left.empty());
}
