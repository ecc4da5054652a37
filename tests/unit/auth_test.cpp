// Digest authentication (issue 13, item 1): the credentials file's parser and reader, --auth-file,
// the fake keeper's ACLs, the round trip's access facts and the judge's auth-required/auth-failed.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "fake_keeper.hpp"
#include "model/facts/credentials.hpp"
#include "model/facts/failure.hpp"
#include "model/judge/checks.hpp"
#include "probes/round_trip.hpp"
#include "synthetic.hpp"
#include "temp_file.hpp"
#include "test_executor.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/store/credentials_file.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace zkverify::verifier;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using synthetic::find;
using zkverify::fake::Ensemble;

namespace {

constexpr auto kSecret = "s3cr:et-pa55";

const Credentials& alice() {
  static const Credentials credentials{"digest", "alice", kSecret};
  return credentials;
}

// The message parse_credentials throws for `text` ("" when it parses).
std::string refusal_of(const std::string& text) {
  try {
    parse_credentials(text);
  } catch (const std::invalid_argument& bad) {
    return bad.what();
  }
  return "";
}

using zkverify::testing::TempFile;

// The message read_credentials_file throws for `path` ("" when it reads), and what it said on err.
std::string read_refusal(const std::string& path, std::string& said) {
  std::ostringstream err;
  try {
    read_credentials_file(path, err);
  } catch (const Error& bad) {
    said = err.str();
    CHECK(bad.code() == make_error_code(Failure::usage));
    return bad.what();
  }
  said = err.str();
  return "";
}

RoundTripPlan plan_for(const std::string& marker = "") {
  RoundTripPlan plan;
  for (int i = 1; i <= 3; ++i)
    plan.servers.push_back({"s" + std::to_string(i), "10.0.0." + std::to_string(i), 2181, {}});
  plan.writer = 0;
  plan.namespace_path = "/zkverify";
  plan.payload = "payload";
  plan.marker_path = marker;
  if (!marker.empty()) plan.marker_content = "marker";
  plan.deadline = Clock::now() + 2s;
  plan.session_timeout = 1000ms;
  return plan;
}

RoundTrip round_trip_with(Ensemble& ensemble, const std::optional<Credentials>& credentials,
                          const std::string& marker = "") {
  CredentialedFactory keepers(ensemble.factory(), credentials);
  return run_round_trip(plan_for(marker), keepers);
}

// The findings of judging `trip` (its servers all serving).
std::vector<Finding> findings_of(const RoundTrip& trip) {
  EnsembleFacts facts;
  facts.probes = {synthetic::server("s1", Mode::leader, 0x100000001, 1),
                  synthetic::server("s2", Mode::follower, 0x100000001, 2),
                  synthetic::server("s3", Mode::follower, 0x100000001, 3)};
  facts.round_trip = trip;
  return judge(facts).findings;
}

std::vector<std::string> codes_of(const std::vector<Finding>& findings) {
  std::vector<std::string> codes;
  for (const auto& finding : findings) codes.emplace_back(to_string(finding.code));
  return codes;
}

}  // namespace

TEST_CASE("credentials: one line digest:USER:PASSWORD, the password may hold ':'", "[auth]") {
  auto parsed = parse_credentials("digest:alice:s3cr:et-pa55\n");
  CHECK(parsed.scheme == "digest");
  CHECK(parsed.user == "alice");
  CHECK(parsed.password == kSecret);
  CHECK(auth_data(parsed) == "alice:s3cr:et-pa55");
  CHECK(parse_credentials("digest:bob:pw\r\n").password == "pw");
  CHECK(parse_credentials("digest:bob:pw").password == "pw");
}

TEST_CASE("credentials: anything else is refused, saying what is wrong and never quoting the text", "[auth]") {
  CHECK_THAT(refusal_of(""), Contains("is empty"));
  CHECK_THAT(refusal_of("\n"), Contains("is empty"));
  CHECK_THAT(refusal_of("s3cr:et-pa55-only"), Contains("does not start with 'digest:'"));
  CHECK_THAT(refusal_of("alicepassword"), Contains("has no scheme"));
  CHECK_THAT(refusal_of("sasl:alice:s3cr:et-pa55"), Contains("does not start with 'digest:'"));
  CHECK_THAT(refusal_of("digest:alice"), Contains("no ':' between USER and PASSWORD"));
  CHECK_THAT(refusal_of("digest::s3cr:et-pa55"), Contains("empty USER"));
  CHECK_THAT(refusal_of("digest:alice:"), Contains("empty PASSWORD"));
  CHECK_THAT(refusal_of("digest:alice:s3cr:et-pa55\ndigest:bob:pw\n"), Contains("more than one line"));
  CHECK_THAT(refusal_of("digest:alice:s3cr\tet-pa55"), Contains("control character"));
  CHECK_THAT(refusal_of(std::string("digest:alice:s3cr\0t", 19)), Contains("control character"));
  for (const auto* text :
       {"s3cr:et-pa55-only", "sasl:alice:s3cr:et-pa55", "digest:alice:s3cr:et-pa55\nx", "digest:alice:s3cr\tet-pa55"}) {
    INFO(text);
    CHECK_THAT(refusal_of(text), !Contains("s3cr") && !Contains("alice"));
  }
}

TEST_CASE("credentials file: read, warned about when others may read it, refused naming the file", "[auth]") {
  std::string said;
  TempFile private_file("digest:alice:s3cr:et-pa55\n", 0600);
  CHECK(read_refusal(private_file.path(), said).empty());
  CHECK(said.empty());
  std::ostringstream err;
  CHECK(read_credentials_file(private_file.path(), err).password == kSecret);

  TempFile open_file("digest:alice:s3cr:et-pa55\n", 0644);
  CHECK(read_refusal(open_file.path(), said).empty());
  CHECK_THAT(said, Contains("warning") && Contains("0644") && Contains(open_file.path()) && !Contains("s3cr"));

  TempFile bad_file("alice s3cr:et-pa55\n", 0600);
  auto refused = read_refusal(bad_file.path(), said);
  CHECK_THAT(refused, Contains(bad_file.path()) && Contains("digest:USER:PASSWORD") && !Contains("s3cr"));

  CHECK_THAT(read_refusal(bad_file.path() + ".missing", said), Contains("cannot open it") && Contains(".missing"));
  CHECK_THAT(read_refusal(std::filesystem::temp_directory_path().string(), said), Contains("not a regular file"));
  TempFile huge(std::string(10000, 'x'), 0600);
  CHECK_THAT(read_refusal(huge.path(), said), Contains("larger than"));
}

TEST_CASE("auth file: --auth-file, else ZKVERIFY_AUTH_FILE, and the flag wins", "[auth]") {
  // Which file was read shows in the refusal: neither file exists.
  auto refusal = [](std::vector<const char*> args, std::map<std::string, std::string> environment) {
    Ensemble ensemble;
    std::ostringstream out, err;
    Context context{test_executor(), ensemble.factory(), out, err, [&](const std::string& name) {
                      auto found = environment.find(name);
                      return found == environment.end() ? std::nullopt : std::optional(found->second);
                    }};
    std::vector<const char*> argv{"zkverify", "quorum", "--servers", "a=127.0.0.1:1"};
    argv.insert(argv.end(), args.begin(), args.end());
    CHECK(run_command_line(static_cast<int>(argv.size()), argv.data(), context) == kExitUsage);
    CHECK(ensemble.sessions_opened() == 0);
    return err.str();
  };
  CHECK_THAT(refusal({"--auth-file", "/etc/zk/flag"}, {}), Contains("'/etc/zk/flag'"));
  CHECK_THAT(refusal({}, {{"ZKVERIFY_AUTH_FILE", "/etc/zk/env"}}), Contains("'/etc/zk/env'"));
  CHECK_THAT(refusal({"--auth-file", "/etc/zk/flag"}, {{"ZKVERIFY_AUTH_FILE", "/etc/zk/env"}}),
             Contains("'/etc/zk/flag'") && !Contains("/etc/zk/env"));
}

TEST_CASE("auth file: a bad one is a usage error (64) before anything is checked, without the secret", "[auth]") {
  TempFile bad_file("alice:s3cr:et-pa55\n", 0600);
  TempFile target("clientPort=2181\nserver.1=a:2888:3888\n", 0600);  // plan's --to
  auto state =
      std::filesystem::temp_directory_path() / ("zkverify-auth-test-roll-" + std::to_string(getpid()) + ".state");
  // What each command needs besides --servers to get as far as reading the file.
  const std::map<std::string, std::vector<const char*>> rest{
      {"safe-to-restart", {"a"}},
      {"plan", {"--to", target.path().c_str()}},
      {"step", {"--restart", "a", "--", "true"}},
      {"roll", {"--state", state.c_str(), "--", "true"}},  // a ledger file, which must stay untouched
      {"serve", {"--listen", "127.0.0.1:0"}}};
  for (const auto* command :
       {"quorum", "order", "safe-to-restart", "plan", "watch", "step", "roll", "smoke", "serve", "probe"}) {
    INFO(command);
    Ensemble ensemble;
    std::ostringstream out, err;
    Context context{test_executor(), ensemble.factory(), out, err};
    std::vector<const char*> argv{"zkverify",      command,       "--servers",
                                  "a=127.0.0.1:1", "--auth-file", bad_file.path().c_str()};
    if (auto more = rest.find(command); more != rest.end())
      argv.insert(argv.end(), more->second.begin(), more->second.end());
    CHECK(run_command_line(static_cast<int>(argv.size()), argv.data(), context) == kExitUsage);
    CHECK_THAT(err.str(), Contains(bad_file.path()) && !Contains("s3cr"));
    CHECK(ensemble.sessions_opened() == 0);
  }
  CHECK_FALSE(std::filesystem::exists(state));  // roll refused before its ledger was touched
}

TEST_CASE("fake keeper ACLs: no_auth without credentials, auth_failed when refused, access with the owner's",
          "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice());
  std::vector<ServerAddress> one{{"s1", "10.0.0.1", 2181, {}}};
  auto deadline = Clock::now() + 2s;

  auto anonymous = ensemble.factory().open(one, {});
  REQUIRE(anonymous->wait_connected(deadline) == ZkError::ok);
  CHECK_FALSE(anonymous->presents_credentials());
  CHECK(create_now(*anonymous, "/zkverify/x", "", CreateMode::persistent, deadline).error == ZkError::no_auth);
  CHECK(get_now(*anonymous, "/zkverify", deadline).error == ZkError::no_auth);
  CHECK(get_acl_now(*anonymous, "/zkverify", deadline).error == ZkError::no_auth);
  CHECK(exists_now(*anonymous, "/zkverify", deadline).error == ZkError::ok);  // exists checks no ACL

  KeeperOptions wrong;
  wrong.credentials = Credentials{"digest", "alice", "guess"};
  auto guesser = ensemble.factory().open(one, wrong);
  REQUIRE(guesser->wait_connected(deadline) == ZkError::ok);  // digest accepts any credentials...
  CHECK(create_now(*guesser, "/zkverify/x", "", CreateMode::persistent, deadline).error == ZkError::no_auth);
  ensemble.reject_unknown_credentials();  // ... unless the server refuses them
  auto refused = ensemble.factory().open(one, wrong);
  CHECK(refused->wait_connected(deadline) == ZkError::auth_failed);
  CHECK(refused->state() == SessionState::auth_failed);
  CHECK(get_now(*refused, "/zkverify", deadline).error == ZkError::auth_failed);

  KeeperOptions right;
  right.credentials = alice();
  auto owner = ensemble.factory().open(one, right);
  REQUIRE(owner->wait_connected(deadline) == ZkError::ok);
  CHECK(owner->presents_credentials());
  CHECK(create_now(*owner, "/zkverify/x", "", CreateMode::persistent, deadline).error == ZkError::ok);
  CHECK(ensemble.acl_of("/zkverify/x") == std::vector<std::string>{"digest:alice"});
  CHECK(get_acl_now(*owner, "/zkverify", deadline).schemes == std::vector<std::string>{"digest"});
  CHECK(remove_now(*anonymous, "/zkverify/x", deadline) == ZkError::no_auth);
  CHECK(remove_now(*owner, "/zkverify/x", deadline) == ZkError::ok);
  CHECK(create_now(*anonymous, "/open", "", CreateMode::persistent, deadline).error == ZkError::ok);
  CHECK(ensemble.acl_of("/open") == std::vector<std::string>{"world:anyone"});
}

TEST_CASE("round trip under a digest ACL without credentials: auth-required names the namespace and scheme", "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice(), true);
  auto trip = round_trip_with(ensemble, std::nullopt);
  CHECK_FALSE(trip.credentials_given);
  CHECK(trip.write_error == ZkError::no_auth);
  CHECK(trip.denied_path == "/zkverify");
  CHECK(trip.acl_error == ZkError::ok);
  CHECK(trip.acl_schemes == std::vector<std::string>{"digest", "world"});
  auto findings = findings_of(trip);
  const auto* required = find(findings, "auth-required");
  REQUIRE(required);
  CHECK(required->severity == Severity::critical);
  CHECK_THAT(required->message, Contains("namespace /zkverify") && Contains("digest") && Contains("--auth-file"));
  CHECK_FALSE(find(findings, "round-trip-failed"));  // one finding says why, not two
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
  CHECK(ensemble.sessions_open() == 0);
}

TEST_CASE("round trip under an unreadable digest ACL: auth-required says the scheme cannot be read", "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice());
  auto trip = round_trip_with(ensemble, std::nullopt, "/zkverify/marker");
  CHECK(trip.marker_create_error == ZkError::no_auth);
  CHECK(trip.denied_path == "/zkverify");
  CHECK(trip.acl_error == ZkError::no_auth);
  auto findings = findings_of(trip);
  const auto* required = find(findings, "auth-required");
  REQUIRE(required);
  CHECK_THAT(required->message, Contains("namespace /zkverify") && Contains("not readable"));
}

TEST_CASE("round trip with wrong credentials: auth-failed, whether the ACL or the server refuses them", "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice(), true);
  Credentials wrong{"digest", "alice", "guess"};
  auto denied = round_trip_with(ensemble, wrong);
  CHECK(denied.credentials_given);
  CHECK(denied.denied_path == "/zkverify");
  auto findings = findings_of(denied);
  const auto* failed = find(findings, "auth-failed");
  REQUIRE(failed);
  CHECK(failed->severity == Severity::critical);
  CHECK_THAT(failed->message, Contains("/zkverify") && Contains("digest") && !Contains("guess"));
  CHECK_FALSE(find(findings, "auth-required"));

  ensemble.reject_unknown_credentials();
  auto refused = round_trip_with(ensemble, wrong);
  CHECK(refused.write_error == ZkError::auth_failed);
  findings = findings_of(refused);
  INFO(codes_of(findings).size());
  REQUIRE(find(findings, "auth-failed"));
  CHECK_THAT(find(findings, "auth-failed")->message, Contains("AUTHFAILED"));
  CHECK_FALSE(find(findings, "round-trip-failed"));
  CHECK(ensemble.sessions_open() == 0);
}

TEST_CASE("round trip with the owner's credentials: healthy, and what it creates is creator-only", "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice());
  auto trip = round_trip_with(ensemble, alice(), "/zkverify/marker");
  CHECK(trip.credentials_given);
  CHECK(trip.write_error == ZkError::ok);
  CHECK(trip.denied_path.empty());
  CHECK(trip.marker_create_error == ZkError::ok);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::ok);
  auto findings = findings_of(trip);
  CHECK_FALSE(find(findings, "auth-required"));
  CHECK_FALSE(find(findings, "auth-failed"));
  CHECK_FALSE(find(findings, "round-trip-failed"));
  CHECK(ensemble.acl_of("/zkverify/marker") == std::vector<std::string>{"digest:alice"});
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify", "/zkverify/marker"});  // the probe node went

  Ensemble fresh;  // a namespace zkverify creates itself is creator-only too
  round_trip_with(fresh, alice());
  CHECK(fresh.acl_of("/zkverify") == std::vector<std::string>{"digest:alice"});
  Ensemble open;  // without credentials everything stays open, as before
  round_trip_with(open, std::nullopt, "/zkverify/marker");
  CHECK(open.acl_of("/zkverify") == std::vector<std::string>{"world:anyone"});
  CHECK(open.acl_of("/zkverify/marker") == std::vector<std::string>{"world:anyone"});
}

namespace {

// A round trip the servers closed for want of SASL, as on a real 3.8.0 lab with enforce.auth
// (tests/lab/zklab up --sasl): the first request answered -124, the session then gone.
RoundTrip closed_for_sasl(bool with_marker) {
  RoundTrip trip;
  trip.writer = "s1";
  trip.reads.resize(3);
  for (int i = 0; i < 3; ++i) trip.reads[i].server = "s" + std::to_string(i + 1);
  if (with_marker) {
    trip.marker_create_error = ZkError::session_closed_requires_sasl_auth;
    trip.write_error = ZkError::connection_loss;
  } else {
    trip.write_error = ZkError::session_closed_requires_sasl_auth;
  }
  return trip;
}

Report judged(const RoundTrip& trip) {
  EnsembleFacts facts;
  facts.probes = {synthetic::server("s1", Mode::leader, 0x100000001, 1),
                  synthetic::server("s2", Mode::follower, 0x100000001, 2),
                  synthetic::server("s3", Mode::follower, 0x100000001, 3)};
  facts.round_trip = trip;
  return judge(facts);
}

}  // namespace

TEST_CASE("servers that require SASL: sasl-required (info) instead of a false critical, the verdict from the words",
          "[auth]") {
  for (bool with_marker : {false, true}) {
    INFO("with a marker (--state): " << with_marker);
    auto report = judged(closed_for_sasl(with_marker));
    CHECK(report.verdict == Verdict::healthy);  // what the words prove, as with --no-write
    for (const char* failure : {"round-trip-failed", "read-back-failed", "auth-required", "auth-failed"})
      CHECK_FALSE(find(report.findings, failure));
    const auto* required = find(report.findings, "sasl-required");
    REQUIRE(required);
    CHECK(required->severity == Severity::info);
    CHECK(required->server == "s1");
    CHECK_THAT(required->message, Contains("session_closed_requires_sasl_auth") && Contains("no credentials") &&
                                      Contains("as with --no-write"));
    CHECK_FALSE(report.round_trip);  // no "round trip via s1: the write was not committed"
  }
  // A reader's session closed so (the writer's was let in): that server is named.
  auto trip = closed_for_sasl(false);
  trip.write_error = ZkError::ok;
  trip.reads[2].error = ZkError::session_closed_requires_sasl_auth;
  auto reader = judged(trip);
  REQUIRE(find(reader.findings, "sasl-required"));
  CHECK(find(reader.findings, "sasl-required")->server == "s3");
  CHECK_FALSE(find(reader.findings, "round-trip-failed"));
  // Digest credentials given, not among the schemes the servers take: said so, not "no credentials".
  trip = closed_for_sasl(false);
  trip.credentials_given = true;
  auto given = judged(trip);
  REQUIRE(find(given.findings, "sasl-required"));
  CHECK_THAT(find(given.findings, "sasl-required")->message,
             Contains("--auth-file") && Contains("enforce.auth.schemes") && !Contains("no credentials"));
  // Still, every other fact judges as ever: no quorum stays critical.
  auto lost = closed_for_sasl(false);
  EnsembleFacts facts;
  facts.probes = {synthetic::server("s1", Mode::leader, 0x100000001, 1), synthetic::unreachable("s2"),
                  synthetic::unreachable("s3")};
  facts.round_trip = lost;
  CHECK(judge(facts).verdict == Verdict::critical);
}

TEST_CASE("credentialed factory: the caller's own credentials win over the factory's", "[auth]") {
  Ensemble ensemble;
  ensemble.protect("/zkverify", alice());
  ensemble.reject_unknown_credentials();
  CredentialedFactory keepers(ensemble.factory(), Credentials{"digest", "mallory", "x"});
  KeeperOptions own;
  own.credentials = alice();
  auto session = keepers.open({{"s1", "10.0.0.1", 2181, {}}}, own);
  CHECK(session->wait_connected(Clock::now() + 2s) == ZkError::ok);
  auto defaulted = keepers.open({{"s1", "10.0.0.1", 2181, {}}}, {});
  CHECK(defaulted->wait_connected(Clock::now() + 2s) == ZkError::auth_failed);
}
