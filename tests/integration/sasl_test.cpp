// Servers that require every session to authenticate (issue 59, item 2): a real 3.8.0 ensemble with
// enforce.auth.enabled=true and enforce.auth.schemes=sasl, as Kafka's security guides set it
// (tests/lab/zklab up --sasl), where a real client that authenticates (kazoo, DIGEST-MD5) writes.
// zkverify does not speak SASL yet: the servers close its sessions (-124), and it must say so and
// judge what it can prove without a session, never "critical" on a healthy ensemble.

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;

namespace {

// kazoo through Debian's python3, authenticated as the lab's user "kafka" (DIR/sasl/password):
// `create` makes an ephemeral sequential node and prints its path; `exists PATH` prints yes or no.
constexpr auto kSaslClient = R"PY(
import logging, sys
from kazoo.client import KazooClient
logging.disable(logging.CRITICAL)
hosts, password, command = sys.argv[1], sys.argv[2], sys.argv[3]
sasl = dict(mechanism="DIGEST-MD5", username="kafka", password=password)
zk = KazooClient(hosts=hosts, timeout=10, sasl_options=sasl)
zk.start(timeout=20)
try:
    if command == "create":
        print(zk.create("/sasl-client-", b"x", ephemeral=True, sequence=True))
    else:
        print("yes" if zk.exists(sys.argv[4]) else "no")
finally:
    zk.stop()
    zk.close()
)PY";

lab::Run sasl_client(const lab::Lab& ensemble, const std::string& args) {
  auto script = std::filesystem::path(ensemble.dir()) / "sasl_client.py";
  if (!std::filesystem::exists(script)) std::ofstream(script) << kSaslClient;
  std::string password;
  std::ifstream(ensemble.dir() + "/sasl/password") >> password;
  auto hosts = lab::sh("echo '" + ensemble.servers() + "' | tr ',' '\\n' | cut -d= -f2 | paste -sd,").out;
  hosts.erase(hosts.find_last_not_of('\n') + 1);
  return lab::sh("timeout 60 /usr/bin/python3 " + script.string() + " " + hosts + " " + password + " " + args);
}

}  // namespace

TEST_CASE("servers that require SASL: the requirement named, the verdict from the words, no false critical",
          "[auth][integration][part:tls]") {
  lab::Lab ensemble("", "--sasl");
  auto servers = ensemble.servers();
  auto created = sasl_client(ensemble, "create");  // the ensemble serves a client that authenticates
  INFO("kazoo with SASL: " << created);
  REQUIRE(created.exit_code == 0);
  CHECK_THAT(created.out, Contains("/sasl-client-"));

  auto run = lab::zkverify("quorum --output json --servers " + servers);
  INFO(run);
  CHECK(run.exit_code == 0);
  auto report = run.json();
  CHECK(report["verdict"] == "healthy");
  CHECK(report["round_trip"].is_null());
  CHECK_FALSE(lab::find_finding(report, "round-trip-failed"));
  const auto* required = lab::find_finding(report, "sasl-required");
  REQUIRE(required);
  CHECK((*required)["severity"] == "info");
  CHECK_FALSE((*required)["server"].is_null());
  // -124 is the servers' own answer: the enforcement is real, and zkverify read it.
  CHECK_THAT((*required)["message"].get<std::string>(),
             Contains("session_closed_requires_sasl_auth") && Contains("no credentials"));

  // --no-write judges the same, and digest credentials that the schemes do not take are named.
  CHECK(lab::zkverify("quorum --no-write --servers " + servers).exit_code == 0);
  auto auth_file = ensemble.dir() + "/digest.auth";
  std::ofstream(auth_file) << "digest:zkverify:not-a-sasl-user\n";
  std::filesystem::permissions(auth_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto digest = lab::zkverify("quorum --servers " + servers + " --auth-file " + auth_file);
  INFO(digest);
  CHECK(digest.exit_code == 0);
  CHECK_THAT(digest.out, Contains("sasl-required") && Contains("--auth-file") && Contains("enforce.auth.schemes"));
  // Nothing was written: the servers closed every session at its first request.
  CHECK(sasl_client(ensemble, "exists /zkverify").out == "no\n");
}
