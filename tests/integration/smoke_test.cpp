// zkverify smoke against a real 5-server ZooKeeper 3.8.0 ensemble (tests/lab/zklab): one lab for
// every step (healthy, interrupted, one server down, no quorum), as each start costs five JVMs.
// The JUnit file is checked by real consumers: xmllint against the junit-10 schema the project
// keeps, and Debian's python3-junitparser, whose counts must be the summary's.

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "../unit/loopback_port.hpp"
#include "integration/lab.hpp"
#include "integration/lab_sessions.hpp"
#include "probes/c_keeper.hpp"

using Catch::Matchers::Contains;

using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

const std::string kSchema = (fs::path(ZKLAB).parent_path().parent_path() / "data" / "junit" / "junit-10.xsd").string();

struct Counts {
  int passed = -1, failed = -1, skipped = 0;
};

// The counts of the summary line "smoke: N passed, M failed[, K skipped] (T s)".
Counts summary_counts(const std::string& out) {
  std::smatch match;
  static const std::regex summary(R"(smoke: (\d+) passed, (\d+) failed(?:, (\d+) skipped)? \([0-9.]+ s\))");
  if (!std::regex_search(out, match, summary)) return {};
  return {std::stoi(match[1]), std::stoi(match[2]), match[3].matched ? std::stoi(match[3]) : 0};
}

// What python3-junitparser reads from the file: "tests failures errors skipped", or its error.
std::string junitparser_counts(const std::string& file) {
  auto run = lab::sh(
      "/usr/bin/python3 -c 'import sys; from junitparser import JUnitXml\n"
      "for suite in JUnitXml.fromfile(sys.argv[1]): print(suite.tests, suite.failures, suite.errors, suite.skipped)' " +
      file);
  return run.exit_code == 0 ? run.out : "junitparser failed: " + run.err;
}

// The JUnit file validates and junitparser reads the counts the summary printed.
void check_junit(const std::string& file, const lab::Run& run) {
  auto validated = lab::sh("xmllint --noout --schema " + kSchema + " " + file);
  INFO(validated.err);
  CHECK(validated.exit_code == 0);
  auto counts = summary_counts(run.out);
  REQUIRE(counts.passed >= 0);
  auto total = counts.passed + counts.failed + counts.skipped;
  CHECK(junitparser_counts(file) == fmt::format("{} {} 0 {}\n", total, counts.failed, counts.skipped));
}

// The lines of the failed cases ("FAIL  id ...").
std::vector<std::string> failed_ids(const std::string& out) {
  std::vector<std::string> ids;
  static const std::regex line(R"(^FAIL  (\S+))", std::regex::multiline);
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    ids.push_back((*it)[1]);
  return ids;
}

// The children of /zkverify, read through the C client (sync first, via any server).
std::vector<std::string> namespace_children(const std::string& servers) {
  auto session = lab::keepers().open(zkverify::parse_server_list(servers), {});
  auto deadline = zkverify::Clock::now() + 10s;
  REQUIRE(session->wait_connected(deadline) == zkverify::ZkError::ok);
  zkverify::probes::Expect<zkverify::DoneResult> synced;
  session->sync("/zkverify", synced.callback());
  REQUIRE(synced.await(deadline).error == zkverify::ZkError::ok);
  zkverify::probes::Expect<zkverify::ChildrenResult> listed;
  session->children("/zkverify", listed.callback());
  auto children = listed.await(deadline);
  REQUIRE(children.error == zkverify::ZkError::ok);
  session->close(deadline);
  return children.children;
}

// A follower of the lab: stopping it leaves the leader in place.
std::vector<std::string> followers(const lab::Lab& ensemble) {
  std::vector<std::string> names;
  auto leader = ensemble.leader();
  for (const auto& entry : zkverify::parse_server_list(ensemble.servers()))
    if (entry.name != leader) names.push_back(entry.name);
  return names;
}

// JSON: the same cases, each with its outcome; latency cases carry their percentiles.
void check_json_all_passed(const std::string& servers) {
  auto json = lab::zkverify("smoke --servers " + servers + " --output json --ops 3 --timeout 5s");
  INFO(json);
  CHECK(json.exit_code == 0);
  CHECK(json.json()["passed"] == 21);
  for (const auto& one : json.json()["cases"]) {
    CHECK(one["outcome"] == "passed");
    if (one["id"].get<std::string>().starts_with("latency/")) CHECK(one["properties"].contains("create.p99_ms"));
  }
}

}  // namespace

TEST_CASE("smoke on a real ensemble: healthy, interrupted, one server down, no quorum",
          "[smoke][integration][part:sidecar]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  auto junit = (fs::path(ensemble.dir()).parent_path() / "smoke.xml").string();

  // Healthy: every case passes, exit 0, nothing left in the namespace.
  auto healthy = lab::zkverify("smoke --servers " + servers + " --wait 60s --junit " + junit);
  INFO(healthy);
  CHECK(healthy.exit_code == 0);
  CHECK(failed_ids(healthy.out).empty());
  CHECK_THAT(healthy.out, Contains("PASS  session-move") && Contains("PASS  watch-fires") &&
                              Contains("PASS  latency/zoo-1") && Contains("PASS  server-serving/pzoo-0"));
  CHECK(summary_counts(healthy.out).passed == 21);
  check_junit(junit, healthy);
  CHECK(namespace_children(servers).empty());

  check_json_all_passed(servers);

  // SIGTERM or SIGINT mid-run (--ops 100000 takes far longer than 2 s): the run stops, says what was
  // skipped, and still removes what it wrote.
  for (const char* signal : {"TERM", "INT"}) {
    auto stopped = lab::sh("$ZKVERIFY smoke --servers " + servers + " --ops 100000 & pid=$!; sleep 2; kill -" + signal +
                           " $pid; wait $pid; echo \"exit $?\"");
    INFO(signal << ": " << stopped.out << stopped.err);
    CHECK_THAT(stopped.out, Contains("skipped") && Contains("exit 1"));
    CHECK(namespace_children(servers).empty());
  }

  // One follower down: its server-serving case fails, and --clients' path that nobody registered under.
  auto down = followers(ensemble);
  REQUIRE(down.size() == 4);
  ensemble.act("stop", down[0]);
  auto degraded = lab::zkverify("smoke --servers " + servers + " --junit " + junit +
                                " --timeout 5s --clients /zkverify-no-clients");
  INFO(degraded);
  CHECK(degraded.exit_code == 1);
  CHECK(failed_ids(degraded.out) ==
        std::vector<std::string>{"server-serving/" + down[0], "clients:/zkverify-no-clients"});
  CHECK_THAT(degraded.out, Contains("/zkverify-no-clients is not there: no client has registered"));
  check_junit(junit, degraded);
  CHECK(namespace_children(servers).empty());

  // No quorum (three of five down): nothing serves, exit 2, the failing cases named, the JUnit file written.
  ensemble.act("stop", down[1]);
  ensemble.act("stop", down[2]);
  fs::remove(junit);
  auto lost = lab::zkverify("smoke --servers " + servers + " --junit " + junit + " --timeout 3s");
  INFO(lost);
  CHECK(lost.exit_code == 2);
  auto failed = failed_ids(lost.out);
  for (const char* id : {"quorum", "round-trip", "ephemeral-cleanup"})
    CHECK(std::ranges::find(failed, id) != failed.end());
  check_junit(junit, lost);

  // --wait gives up on an ensemble that does not come back: exit 2, progress on stderr.
  auto waited = lab::zkverify("smoke --servers " + servers + " --wait 2s --timeout 1s");
  CHECK(waited.exit_code == 2);
  CHECK_THAT(waited.err, Contains("waiting for the ensemble: ") && Contains("/5 serving"));
}

TEST_CASE("smoke on a one-server lab: every case passes but session-move, skipped: exit 0",
          "[smoke][integration][part:shapes]") {
  auto& solo = lab::shared("", "--names solo");
  auto run = lab::zkverify("smoke --servers " + solo.servers() + " --wait 30s --ops 3");
  INFO(run);
  CHECK(run.exit_code == 0);
  CHECK(failed_ids(run.out).empty());
  CHECK_THAT(run.out, Contains("SKIP  session-move") && Contains("smoke: 12 passed, 0 failed, 1 skipped"));
  CHECK(namespace_children(solo.servers()).empty());
}

TEST_CASE("smoke usage errors exit 64 naming the flag, an unwritable --junit file exits 74",
          "[smoke][integration][part:cli]") {
  auto bad_ops = lab::zkverify("smoke --servers a=127.0.0.1:1 --ops 0");
  CHECK(bad_ops.exit_code == 64);
  CHECK_THAT(bad_ops.err, Contains("--ops 0"));
  auto bad_wait = lab::zkverify("smoke --servers a=127.0.0.1:1 --wait soon");
  CHECK(bad_wait.exit_code == 64);
  CHECK_THAT(bad_wait.err, Contains("'soon' is not a duration"));
  auto no_servers = lab::zkverify("smoke");
  CHECK(no_servers.exit_code == 64);
  loopback::RefusingPort nobody;
  auto unwritable = lab::zkverify("smoke --servers a=127.0.0.1:" + std::to_string(nobody.port()) +
                                  " --timeout 1s --junit /nonexistent-zkverify-dir/smoke.xml");
  CHECK(unwritable.exit_code == 74);
  CHECK_THAT(unwritable.err, Contains("--junit '/nonexistent-zkverify-dir/smoke.xml': cannot be written"));
  CHECK(unwritable.out.empty());  // refused before any case ran: a result it could not write is not hidden
}
