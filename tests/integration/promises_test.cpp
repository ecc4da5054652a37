// README promises that had no test of their own (issue 15), against the real lab. One lab for all
// of them, in one test case, block after block (a SECTION would start a lab of its own).

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../unit/fake_peer.hpp"
#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using lab::zkverify;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A directory under /tmp that the unprivileged user `nobody` can search (TMPDIR may be 0700).
struct SharedScratch {
  fs::path dir;
  SharedScratch() {
    std::string pattern = "/tmp/zkverify-promises-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()));
    dir = pattern;
    REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  }
  ~SharedScratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  SharedScratch(const SharedScratch&) = delete;
  SharedScratch& operator=(const SharedScratch&) = delete;
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The --wait progress lines among `err`.
std::vector<std::string> attempt_lines(const std::string& err) {
  std::vector<std::string> attempts;
  for (auto& line : lines_of(err))
    if (line.find("] attempt ") != std::string::npos) attempts.push_back(line);
  return attempts;
}

std::vector<std::int64_t> node_counts(const lab::Run& run) {
  std::vector<std::int64_t> counts;
  for (const auto& server : run.json()["servers"])
    counts.push_back(server["node_count"].is_number() ? server["node_count"].get<std::int64_t>() : -1);
  return counts;
}

// Answers srvr as a follower of the lab's first epoch, then nothing more: its other words and the
// ZooKeeper handshake stall, so a check that lists it uses its whole --timeout.
fake::Peer handshake_staller() {
  return fake::Peer({{"srvr",
                      {fake::Behaviour::answer,
                       "Zookeeper version: 3.8.0-fake, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: "
                       "0/0.0/0\nReceived: 1\nSent: 1\nConnections: 1\nOutstanding: 0\nZxid: 0x100000000\n"
                       "Mode: follower\nNode count: 5\n"}}},
                    {fake::Behaviour::stall, ""});
}

// "Too many connections from ..." lines in the servers' logs: a client over maxClientCnxns.
int refused_connections(const lab::Lab& ensemble) {
  auto run = lab::sh("cat " + ensemble.dir() + "/*/server.log | grep -c 'Too many connections from' || true");
  return std::stoi(run.out.empty() ? "0" : run.out);
}

// A custom --namespace is created if missing, the round trip's writer is the leader, its node is gone
// at the end, and nothing is written outside the namespace: a fresh server has 5 nodes (/, /zookeeper
// and its children), so after the run it has exactly one more, the namespace.
void check_custom_namespace(const std::string& servers, const std::string& leader) {
  auto run = zkverify("quorum --output json --namespace /zkv-custom --servers " + servers);
  INFO(run);
  CHECK(run.exit_code == 0);
  CHECK(run.json()["round_trip"]["writer"] == leader);
  CHECK_THAT(run.json()["round_trip"]["path"].get<std::string>(), StartsWith("/zkv-custom/roundtrip-"));
  auto after = zkverify("quorum --output json --no-write --servers " + servers);
  CHECK(node_counts(after) == std::vector<std::int64_t>(5, 6));

  auto no_parent = zkverify("quorum --output json --namespace /zkv-missing/child --servers " + servers);
  INFO(no_parent);
  CHECK(no_parent.exit_code == 2);
  REQUIRE(lab::find_finding(no_parent.json(), "round-trip-failed"));
  CHECK_THAT((*lab::find_finding(no_parent.json(), "round-trip-failed"))["message"].get<std::string>(),
             Contains("parent does not exist"));
  CHECK(node_counts(zkverify("quorum --output json --no-write --servers " + servers)) ==
        std::vector<std::int64_t>(5, 6));  // nothing created for it
}

// safe-to-restart --output json: one object, {server, safe, reason}.
void check_safe_to_restart_json(const std::string& servers, const std::string& follower) {
  auto run = zkverify("safe-to-restart " + follower + " --output json --servers " + servers);
  INFO(run);
  CHECK(run.exit_code == 0);
  std::vector<std::string> keys;
  for (const auto& item : run.json().items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"reason", "safe", "server"});
  CHECK(run.json()["server"] == follower);
  CHECK(run.json()["safe"] == true);
  CHECK_THAT(run.json()["reason"].get<std::string>(), Contains("5 synced voters of 5"));
}

// --wait with --stable 2: two healthy attempts, a progress line each in README's format, then the
// report (one JSON object) of the last.
void check_wait_stable_two(const std::string& servers) {
  auto run = zkverify("quorum --output json --wait 30s --interval 100ms --stable 2 --servers " + servers);
  INFO(run);
  CHECK(run.exit_code == 0);
  auto attempts = attempt_lines(run.err);
  REQUIRE(attempts.size() == 2);
  std::regex format(R"(zkverify: \[ {0,6}[0-9][0-9.]*m?s\] attempt ([12]): healthy, healthy \1/2 in a row)");
  for (const auto& line : attempts) CHECK(std::regex_match(line, format));
  CHECK(run.json()["verdict"] == "healthy");
}

// Exit 74 when the ledger cannot be written, and the old one stands byte for byte: the second run
// may not grow any file (ulimit -f 0, SIGXFSZ ignored so that the write fails with EFBIG).
void check_unwritable_ledger(const std::string& servers, const SharedScratch& scratch, const std::string& state) {
  REQUIRE(zkverify("quorum --servers " + servers + " --state " + state).exit_code == 0);
  auto before = bytes_of(state);
  REQUIRE_FALSE(before.empty());
  auto run = lab::sh("trap '' XFSZ; ( ulimit -f 0; $ZKVERIFY quorum --servers " + servers + " --state " + state +
                     " 2>&1 >/dev/null; echo \"exit $?\" ) | cat");
  INFO(run);
  CHECK_THAT(run.out, Contains("exit 74"));
  CHECK_THAT(run.out, Contains("state file " + state + " not written (") && Contains("File too large") &&
                          Contains("the previous one stands"));
  CHECK(lines_of(run.out).size() == 2);  // one line naming it, then the exit code
  CHECK(bytes_of(state) == before);
  for (const auto& entry : fs::directory_iterator(scratch.dir))
    CHECK_FALSE(entry.path().filename().string().find(".tmp.") != std::string::npos);
}

// A state file its user may not read is 64 naming it, not a first run (root reads anything: the run
// is nobody's).
void check_unreadable_ledger(const std::string& servers, const std::string& state) {
  REQUIRE(::chmod(state.c_str(), 0600) == 0);
  REQUIRE(::chmod((state + ".lock").c_str(), 0644) == 0);
  auto before = bytes_of(state);
  auto run = lab::sh("setpriv --reuid=nobody --regid=nogroup --clear-groups $ZKVERIFY quorum --servers " + servers +
                     " --state " + state);
  INFO(run);
  CHECK(run.exit_code == 64);
  CHECK_THAT(run.err, Contains(state) && Contains("Permission denied"));
  CHECK(lines_of(run.err).size() == 1);
  CHECK(run.out.empty());
  CHECK(bytes_of(state) == before);
}

// The wait for the ledger's lock comes out of --timeout: held for 1.5s by another (zkverify starts
// once it is held), then a check that uses all of its time (a server that stalls the round trip)
// still ends by --timeout 3s. Were the wait not taken out, the run would last 1.5s + 3s.
void check_lock_wait_within_timeout(const std::string& servers, const SharedScratch& scratch) {
  auto staller = handshake_staller();
  auto locked = scratch.file("locked.json"), held = scratch.file("held");
  auto run =
      lab::sh("flock " + locked + ".lock sh -c 'touch " + held + "; sleep 1.5' & while [ ! -e " + held +
              " ]; do sleep 0.02; done; start=$(date +%s%N); $ZKVERIFY quorum --output json --timeout 3s" +
              " --state " + locked + " --servers " + servers + ",staller=127.0.0.1:" + std::to_string(staller.port()) +
              "; code=$?; echo \"took $(( ($(date +%s%N) - start) / 1000000 ))\" >&2;" + " wait; exit $code");
  INFO(run);
  auto took_at = run.err.rfind("took ");
  REQUIRE(took_at != std::string::npos);
  std::chrono::milliseconds took{std::stol(run.err.substr(took_at + 5))};
  WARN("lock held 1.5s, --timeout 3s: " << took.count() << " ms");
  CHECK(run.exit_code == 1);      // the staller could not read the write back; the five real servers did
  CHECK(took >= 1300ms);          // it did wait for the lock
  CHECK(took <= 3300ms + 200ms);  // --timeout + 10%, a process's start and exit
  CHECK(run.json()["round_trip"]["reads_ok"] == 5);
}

// order with a server paused: exit 0, the unhealthy server first, a warning on stderr.
void check_order_warns(const std::string& servers, const std::string& paused) {
  auto run = zkverify("order --timeout 1s --servers " + servers);
  INFO(run);
  CHECK(run.exit_code == 0);
  CHECK(run.out.starts_with(paused + "\n"));
  CHECK(lines_of(run.out).size() == 5);
  CHECK(run.err == "zkverify order: the ensemble is degraded now; check it with zkverify quorum before restarting\n");
}

// With --wait, --timeout (default 5s) is each attempt's: with a server that stalls the round trip,
// the one attempt takes its whole 5s, longer than --wait 4s itself, and no more.
void check_wait_default_timeout(const std::string& servers) {
  auto staller = handshake_staller();
  auto run = zkverify("quorum --wait 4s --interval 100ms --servers " + servers +
                      ",staller=127.0.0.1:" + std::to_string(staller.port()));
  INFO(run);
  WARN("one attempt with the default timeout: " << run.elapsed.count() << " ms");
  CHECK(run.exit_code == 1);  // the staller could not read the write back; the five real servers did
  CHECK(attempt_lines(run.err).size() == 1);
  CHECK_THAT(run.err, Contains("attempt 1: degraded ("));
  CHECK_THAT(run.err, Contains("--wait 4.0s is over"));
  // The attempt runs to 0.9 of the default 5s (its round trip's share, measured 4.5s); capped by
  // --wait (4s) it would end by 3.6s.
  CHECK(run.elapsed >= 4300ms);
  CHECK(run.elapsed <= 5500ms + 200ms);
}

// The report and the exit code are the last attempt's: degraded first, healthy once resumed.
void check_last_attempt_reported(const lab::Lab& ensemble, const std::string& paused) {
  // Resumed once the first attempt has been reported (a bounded wait of 30 s on its progress line).
  auto progress = ensemble.dir() + "/wait-progress";
  auto run =
      lab::sh("(i=0; while ! grep -q 'attempt 1:' " + progress + " 2>/dev/null && [ $i -lt 1500 ]; do sleep 0.02;" +
              " i=$((i+1)); done; " + ZKLAB + " resume " + ensemble.dir() + " " + paused +
              " >/dev/null 2>&1) & $ZKVERIFY quorum --output json --timeout 1s --wait 60s --interval 200ms"
              " --stable 2 --servers " +
              ensemble.servers() + " 2>" + progress + "; code=$?; wait; cat " + progress + " >&2; exit $code");
  INFO(run);
  CHECK(run.exit_code == 0);
  auto attempts = attempt_lines(run.err);
  REQUIRE(attempts.size() >= 3);
  CHECK_THAT(attempts.front(), Contains("attempt 1: degraded (unreachable " + paused));
  CHECK_THAT(attempts.back(), Contains(": healthy, healthy 2/2 in a row"));
  CHECK(run.json()["verdict"] == "healthy");
  CHECK(run.json()["serving_voters"] == 5);
  CHECK_FALSE(lab::find_finding(run.json(), "unreachable"));
}

// "At most two connections per server at a time" (quorum: a word beside srvr, or a session beside
// one word): with maxClientCnxns=2 every server refuses a third connection from this host, and the
// whole check (probes and round trip) still passes, refused nowhere.
void check_two_connections_per_server(const lab::Lab& ensemble) {
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}) ensemble.act("stop", name);
  REQUIRE(lab::sh("sed -i 's/^maxClientCnxns=3$/maxClientCnxns=2/' " + ensemble.dir() + "/*/zoo.cfg").exit_code == 0);
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}) ensemble.act("start", name);
  ensemble.act("wait");
  auto servers = ensemble.servers();
  // The limit binds: a third connection while two are open is refused, and logged.
  auto port = servers.substr(servers.find(':') + 1, servers.find(',') - servers.find(':') - 1);
  auto third = lab::sh("bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + " 4<>/dev/tcp/127.0.0.1/" + port +
                       "; sleep 0.5; echo srvr | nc -q 2 127.0.0.1 " + port + "; exec 3<&- 4<&-'");
  INFO(third);
  CHECK(third.out.empty());
  auto refused_before = refused_connections(ensemble);
  CHECK(refused_before >= 1);

  for (int i = 0; i < 3; ++i) {
    auto run = zkverify("quorum --output json --servers " + servers);
    INFO(run);
    CHECK(run.exit_code == 0);
    CHECK(run.json()["round_trip"]["reads_ok"] == 5);
  }
  CHECK(refused_connections(ensemble) == refused_before);
}

}  // namespace

TEST_CASE("README promises on one lab: the namespace, safe-to-restart's JSON, the state file, --wait",
          "[integration][promises][part:continuity]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  SharedScratch scratch;
  auto state = scratch.file("ledger.json");

  check_custom_namespace(servers, leader);
  check_safe_to_restart_json(servers, leader == "pzoo-0" ? "pzoo-1" : "pzoo-0");
  check_wait_stable_two(servers);
  check_unwritable_ledger(servers, scratch, state);
  check_unreadable_ledger(servers, state);
  check_lock_wait_within_timeout(servers, scratch);
}

TEST_CASE(
    "README promises on one lab with a follower paused: order's warning, --wait's default timeout, "
    "the last attempt's report, two connections per server",
    "[integration][promises][part:continuity]") {
  auto& ensemble = lab::shared();
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  std::string paused = leader == "zoo-0" ? "zoo-1" : "zoo-0";
  ensemble.act("pause", paused);

  check_order_warns(ensemble.servers(), paused);
  check_wait_default_timeout(ensemble.servers());
  check_last_attempt_reported(ensemble, paused);  // resumes it
  check_two_connections_per_server(ensemble);
}
