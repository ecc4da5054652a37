// Deadlines hold end to end: `zkverify quorum` answers within --timeout + 10% + 200 ms whatever the
// servers do (a leader frozen before or after the write, a peer that accepts TCP and never answers
// the ZooKeeper handshake), and host names go through the bounded resolver into the C client.

#include <chrono>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "../unit/fake_peer.hpp"
#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;
using namespace std::chrono_literals;

namespace {

// srvr as a follower of the lab's first epoch says it.
constexpr auto kFollowerSrvr =
    "Zookeeper version: 3.8.0-fake, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: 0/0.0/0\nReceived: 1\n"
    "Sent: 1\nConnections: 1\nOutstanding: 0\nZxid: 0x100000000\nMode: follower\nNode count: 5\n";

// The bound: the timeout, plus 10%, plus 200 ms.
std::chrono::milliseconds bound(std::chrono::milliseconds timeout) { return timeout + timeout / 10 + 200ms; }

// The "zkverify took N ms" line a test's shell wrote to stderr; an hour when there is none.
std::chrono::milliseconds own_time(const std::string& err) {
  auto at = err.rfind("zkverify took ");
  if (at == std::string::npos) return std::chrono::hours(1);
  return std::chrono::milliseconds(std::stol(err.substr(at + 14)));
}

// Answers srvr as a follower, so the round trip opens a session to it; then never answers again:
// its other words and the ZooKeeper handshake (whose first four bytes are no word) stall.
class HandshakeStaller {
 public:
  [[nodiscard]] std::string entry(const std::string& name) const {
    return name + "=127.0.0.1:" + std::to_string(peer_.port());
  }

 private:
  fake::Peer peer_{{{"srvr", {fake::Behaviour::answer, kFollowerSrvr}}}, {fake::Behaviour::stall, ""}};
};

// The row of the server named `name`, or nullptr.
const nlohmann::json* row(const nlohmann::json& report, const std::string& name) {
  for (const auto& server : report["servers"])
    if (server["name"] == name) return &server;
  return nullptr;
}

// Re-runs `zkverify ARGS` until it exits 0 or 20 s have passed; returns the last run.
lab::Run until_healthy(const std::string& args) {
  auto give_up = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    auto run = zkverify(args);
    if (run.exit_code == 0 || std::chrono::steady_clock::now() > give_up) return run;
  }
}

// The read-back-failed finding about `server` (its read after sync failed while a majority read the
// write back: degraded), or nullptr.
const nlohmann::json* read_back_failure(const nlohmann::json& report, const std::string& server) {
  for (const auto& finding : report["findings"])
    if (finding["code"] == "read-back-failed" && finding["server"] == server) return &finding;
  return nullptr;
}

}  // namespace

TEST_CASE("a frozen leader (SIGSTOP) with --timeout 3s: quorum answers within 3.5 s and names it",
          "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  auto leader = ensemble.leader();
  REQUIRE_FALSE(leader.empty());
  auto quorum = "quorum --output json --timeout 3s --servers " + ensemble.servers();

  // Frozen while the round trip is under way: the staller holds the round trip open (its session
  // never connects) until the round trip's deadline, 2.7 s; the write and the real servers' reads
  // are done by 1.7 s (the probe phase ends at 1.5 s); the leader freezes at 2.1 s, so the delete
  // and the sessions' closes (quorum transactions) cannot complete and are abandoned at 3 s.
  {
    HandshakeStaller staller;
    // zkverify's own time, measured around it alone: the line's also holds the lab script's pause,
    // which can take seconds on a loaded machine (a CI run failed on that, not on zkverify).
    auto run = lab::sh("( t0=$(date +%s%N); $ZKVERIFY " + quorum + "," + staller.entry("staller") +
                       "; rc=$?; echo \"zkverify took $((($(date +%s%N) - t0) / 1000000)) ms\" >&2; exit $rc ) & "
                       "sleep 2.1; " +
                       ZKLAB + " pause " + ensemble.dir() + " " + leader + " >/dev/null 2>&1; wait $!");
    ensemble.act("resume", leader);
    INFO(run);
    auto took = own_time(run.err);
    WARN("frozen after the write: " << took.count() << " ms");
    CHECK(took <= bound(3s));
    CHECK(run.exit_code == 1);  // the staller could not read back; the five real servers did
    const auto& report = run.json();
    CHECK(report["round_trip"]["reads_ok"] == 5);  // the freeze came after the write and its reads
    REQUIRE(lab::find_finding(report, "cleanup-deferred"));
    CHECK((*lab::find_finding(report, "cleanup-deferred"))["server"] == leader);
    REQUIRE(read_back_failure(report, "staller"));
  }
  // Frozen before the run, right after a write: it is unreachable, and no session can be created
  // (that needs the leader, which the followers do not yet know is gone). The freeze above was
  // shorter than the followers' patience (syncLimit), so the leader still leads.
  {
    REQUIRE(until_healthy(quorum).exit_code == 0);
    leader = ensemble.leader();
    ensemble.act("pause", leader);
    auto run = zkverify(quorum);
    ensemble.act("resume", leader);
    INFO(run);
    WARN("frozen before the run: " << run.elapsed.count() << " ms");
    CHECK(run.elapsed <= bound(3s));
    CHECK(run.exit_code == 2);
    const auto& report = run.json();
    REQUIRE(lab::find_finding(report, "unreachable"));
    CHECK((*lab::find_finding(report, "unreachable"))["server"] == leader);
    REQUIRE(row(report, leader));
    CHECK((*row(report, leader))["error"] == "connected, but no reply within the deadline");
  }
}

TEST_CASE("silent peers beside a lab listed by host name: --timeout 2s holds and the five are judged",
          "[integration][part:quorum]") {
  auto& ensemble = lab::shared();
  // The real five by name: looked up by the bounded resolver, for the probes and the C client.
  auto by_name = std::regex_replace(ensemble.servers(), std::regex("=127\\.0\\.0\\.1:"), "=localhost:");
  REQUIRE_THAT(by_name, Contains("=localhost:"));
  fake::Peer silent({}, {fake::Behaviour::stall, ""});
  HandshakeStaller staller;
  auto list = by_name + ",silent=127.0.0.1:" + std::to_string(silent.port()) + "," + staller.entry("staller");

  auto run = zkverify("quorum --output json --timeout 2s --servers " + list);
  INFO(run);
  WARN("silent peer and handshake staller: " << run.elapsed.count() << " ms");
  CHECK(run.elapsed <= bound(2s));
  CHECK(run.exit_code == 1);  // the staller could not read back (degraded); the five real servers did
  const auto& report = run.json();
  CHECK(report["leader"] == ensemble.leader());
  REQUIRE(report["servers"].size() == 7);
  for (std::size_t i = 0; i < 5; ++i) CHECK(report["servers"][i]["error"].is_null());
  CHECK(report["round_trip"]["reads_ok"] == 5);
  CHECK(report["round_trip"]["reads_attempted"] == 6);

  REQUIRE(row(report, "silent"));
  CHECK((*row(report, "silent"))["mode"] == "unreachable");
  CHECK((*row(report, "silent"))["error"] == "connected, but no reply within the deadline");
  REQUIRE(read_back_failure(report, "staller"));
  CHECK_THAT((*read_back_failure(report, "staller"))["message"].get<std::string>(), Contains("deadline_exceeded"));

  // Sessions opened by name (given to the C client as addresses) report the listed name of the
  // server they reached, not its address.
  std::set<std::string> names;
  for (std::size_t i = 0; i < 5; ++i) names.insert(report["servers"][i]["name"].get<std::string>());
  auto watch = zkverify("watch --output json --duration 2s --servers " + by_name);
  INFO(watch);
  CHECK(watch.exit_code == 0);
  std::set<std::string> reached;
  for (const auto& event : lab::event_lines(watch.out))
    if (event.value("event", "") == "connected")
      reached.insert(event["server"].is_string() ? event["server"].get<std::string>() : "(no server)");
  CHECK(reached == names);
}
