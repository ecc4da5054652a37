// SASL for every session (issue 59, item 1): the packets the relay reads and writes, its handshake
// machine (without sockets, over a scripted mechanism), a refusal through the round trip to the
// judge's auth-failed, and the options. The exchange with real servers: tests/integration/sasl_test.

#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "fake_keeper.hpp"
#include "model/facts/credentials.hpp"
#include "model/judge/checks.hpp"
#include "model/parse/zk_wire.hpp"
#include "model/render/report_view.hpp"
#include "probes/round_trip.hpp"
#include "probes/sasl_handshake.hpp"
#include "synthetic.hpp"
#include "temp_file.hpp"
#include "test_executor.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/store/credentials_file.hpp"

using namespace zkverify;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

std::string be32(std::uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
          static_cast<char>(value)};
}

std::string be64(std::uint64_t value) {
  return be32(static_cast<std::uint32_t>(value >> 32)) + be32(static_cast<std::uint32_t>(value));
}

// A connect request as the C client sends it (protocolVersion, lastZxidSeen, timeOut, sessionId,
// passwd), framed.
std::string connect_request(std::uint64_t session) {
  return wire::frame(be32(0) + be64(0) + be32(10000) + be64(session) + be32(16) + std::string(16, 'p'));
}

// A connect response (protocolVersion, timeOut, sessionId, passwd, readOnly), framed.
std::string connect_response(std::int32_t timeout, std::uint64_t session) {
  return wire::frame(be32(0) + be32(static_cast<std::uint32_t>(timeout)) + be64(session) + be32(16) +
                     std::string(16, 'q') + std::string(1, '\0'));
}

// A reply to a SASL request (xid, zxid, err, then the token's buffer unless `bodiless`), framed.
std::string sasl_reply(std::int32_t xid, std::int32_t error, const std::string& token, bool bodiless = false) {
  auto payload = be32(static_cast<std::uint32_t>(xid)) + be64(0) + be32(static_cast<std::uint32_t>(error));
  if (!bodiless) payload += be32(static_cast<std::uint32_t>(token.size())) + token;
  return wire::frame(payload);
}

// A mechanism that answers from a script: the first token, then one per challenge (DIGEST-MD5's
// shape by default: an empty first token, a response, and completion on the server's rspauth).
class ScriptedMechanism final : public probes::SaslMechanism {
 public:
  probes::SaslStep first{true, false, "", ""};
  std::deque<probes::SaslStep> answers{{true, false, "response", ""}, {true, true, "", ""}};
  std::vector<std::string> challenges;
  probes::SaslStep start() override { return first; }
  probes::SaslStep step(std::string_view challenge) override {
    challenges.emplace_back(challenge);
    auto next = answers.front();
    if (answers.size() > 1) answers.pop_front();
    return next;
  }
};

using zkverify::testing::TempFile;

}  // namespace

TEST_CASE("zk wire: frames split however the bytes come, SASL requests and replies, connect packets", "[sasl]") {
  wire::FrameReader reader;
  auto both = wire::frame("abc") + wire::frame("");
  reader.feed(both.substr(0, 2));
  CHECK_FALSE(reader.next());
  reader.feed(both.substr(2, 4));
  CHECK_FALSE(reader.next());
  reader.feed(both.substr(6) + "xy");
  CHECK(reader.next() == std::optional<std::string>("abc"));
  CHECK(reader.next() == std::optional<std::string>(""));
  CHECK_FALSE(reader.next());
  CHECK(reader.rest() == "xy");
  wire::FrameReader hostile;
  hostile.feed(be32(0x7fffffff));
  CHECK_FALSE(hostile.next());
  CHECK(hostile.malformed());

  CHECK(wire::sasl_request(7, "tok") == wire::frame(be32(7) + be32(102) + be32(3) + "tok"));
  auto reply = wire::parse_sasl_reply(sasl_reply(3, 0, "challenge").substr(4));
  REQUIRE(reply);
  CHECK(reply->xid == 3);
  CHECK(reply->error == 0);
  CHECK(reply->token == "challenge");
  auto refused = wire::parse_sasl_reply(sasl_reply(4, -124, "", true).substr(4));
  REQUIRE(refused);
  CHECK(refused->error == -124);
  CHECK_FALSE(wire::parse_sasl_reply(sasl_reply(4, 0, "long").substr(4, 20)));  // cut inside the token

  CHECK(wire::connect_request_session(connect_request(0x500000001).substr(4)) == 0x500000001);
  CHECK(wire::connect_response_timeout(connect_response(6000, 1).substr(4)) == 6000);
  CHECK(wire::connect_response_timeout(wire::expired_connect_response(connect_response(6000, 1).substr(4))) == 0);
  CHECK_FALSE(wire::connect_request_session("short"));
}

TEST_CASE("sasl handshake: the connect response held until the exchange ends, then passed on", "[sasl]") {
  ScriptedMechanism mechanism;
  probes::SaslHandshake handshake(mechanism);
  using Need = probes::SaslHandshake::Need;
  CHECK(handshake.need() == Need::client_bytes);
  auto request = connect_request(0);
  handshake.from_client(request.substr(0, 10));  // a connect request in two reads
  CHECK(handshake.take_for_server().empty());
  handshake.from_client(request.substr(10));
  CHECK(handshake.take_for_server() == request);
  CHECK(handshake.need() == Need::server_bytes);

  auto response = connect_response(10000, 0x100000001);
  handshake.from_server(response);
  CHECK(handshake.take_for_client().empty());  // held
  CHECK(handshake.take_for_server() == wire::sasl_request(1, ""));
  handshake.from_server(sasl_reply(1, 0, "realm=\"zk-sasl-md5\",nonce=\"n\""));
  CHECK(mechanism.challenges == std::vector<std::string>{"realm=\"zk-sasl-md5\",nonce=\"n\""});
  CHECK(handshake.take_for_server() == wire::sasl_request(2, "response"));
  CHECK(handshake.need() == Need::server_bytes);
  handshake.from_server(sasl_reply(2, 0, "rspauth=x") + "\x01");  // a byte beyond: passed on too
  CHECK(handshake.need() == Need::done);
  CHECK(handshake.take_for_client() == response + "\x01");
  CHECK(handshake.take_for_server().empty());
}

TEST_CASE("sasl handshake: a refusal, a library's failure, a broken server and a session not resumed", "[sasl]") {
  using Need = probes::SaslHandshake::Need;
  auto started = [](probes::SaslHandshake& handshake) {
    handshake.from_client(connect_request(0));
    handshake.from_server(connect_response(10000, 0x100000001));
    handshake.take_for_server();
  };
  ScriptedMechanism mechanism;
  probes::SaslHandshake refused(mechanism);
  started(refused);
  refused.from_server(sasl_reply(1, 0, "challenge"));
  refused.from_server(sasl_reply(2, -124, "", true));
  CHECK(refused.need() == Need::failed);
  CHECK(refused.refused_by_server());
  CHECK_THAT(refused.failure(), Contains("the server refused it (session_closed_requires_sasl_auth)"));
  CHECK(refused.take_for_client().empty());  // the C client never sees the session

  ScriptedMechanism broken;
  broken.first = {false, false, "", "no mechanism available"};
  probes::SaslHandshake library(broken);
  started(library);
  CHECK(library.need() == Need::failed);
  CHECK_FALSE(library.refused_by_server());
  CHECK_THAT(library.failure(), Contains("this host's SASL library: no mechanism available"));

  ScriptedMechanism endless;
  endless.answers = {{true, false, "more", ""}};
  probes::SaslHandshake cut(endless);
  started(cut);
  for (int xid = 1; xid <= probes::SaslHandshake::kMaxRequests && cut.need() == Need::server_bytes; ++xid)
    cut.from_server(sasl_reply(xid, 0, "again"));
  CHECK(cut.need() == Need::failed);
  CHECK_THAT(cut.failure(), Contains("did not end"));

  ScriptedMechanism unused;
  probes::SaslHandshake garbled(unused);
  garbled.from_client(connect_request(0));
  garbled.from_server(be32(0xfffffff0));
  CHECK(garbled.need() == Need::failed);
  CHECK_FALSE(garbled.refused_by_server());

  ScriptedMechanism untouched;  // the server would not resume the session: the C client hears it itself
  probes::SaslHandshake expired(untouched);
  expired.from_client(connect_request(0x100000001));
  expired.take_for_server();
  expired.from_server(connect_response(0, 0));
  CHECK(expired.need() == Need::done);
  CHECK(expired.take_for_client() == connect_response(0, 0));
  CHECK(expired.take_for_server().empty());  // no SASL request
}

TEST_CASE("sasl refusal: who failed, and what a server's refusal usually means by mechanism", "[sasl]") {
  // What a server's refusal usually means, by mechanism; a host's own failure is only itself.
  SaslRefusal digest{"pzoo-0", "DIGEST-MD5", "kafka", "the server refused it (session_closed_requires_sasl_auth)",
                     true};
  CHECK(describe(digest) ==
        "pzoo-0 refused SASL DIGEST-MD5 as kafka: the server refused it "
        "(session_closed_requires_sasl_auth): a wrong password, or a user the servers' JAAS "
        "Server section does not list");
  SaslRefusal kerberos{"pzoo-0", "GSSAPI", "", "the server refused it (auth_failed)", true};
  CHECK(describe(kerberos) ==
        "pzoo-0 refused SASL GSSAPI: the server refused it (auth_failed): a principal or "
        "ticket the servers do not accept");
  SaslRefusal host{"pzoo-0", "GSSAPI", "", "this host's SASL library: no credentials", false};
  CHECK(describe(host) == "SASL GSSAPI with pzoo-0 failed: this host's SASL library: no credentials");
}

TEST_CASE("sasl refused: the round trip keeps who refused and why, the judge says auth-failed, alike ones together",
          "[sasl]") {
  zkverify::fake::Ensemble ensemble;
  ensemble.refuse_sasl("s1", "the server refused it (session_closed_requires_sasl_auth)");
  ensemble.refuse_sasl("s2", "the server refused it (session_closed_requires_sasl_auth)");
  ensemble.refuse_sasl("s3", "this host's SASL library: no mechanism available", false);
  probes::RoundTripPlan plan;
  for (int i = 1; i <= 3; ++i)
    plan.servers.push_back({"s" + std::to_string(i), "10.0.0." + std::to_string(i), 2181, {}});
  plan.namespace_path = "/zkverify";
  plan.payload = "payload";
  plan.deadline = Clock::now() + 2s;
  auto trip = probes::run_round_trip(plan, ensemble.factory());
  CHECK(trip.write_error == ZkError::auth_failed);
  REQUIRE(trip.sasl_refusals.size() == 3);
  CHECK(trip.sasl_refusals[0].server == "s1");

  EnsembleFacts facts;
  facts.probes = {synthetic::server("s1", Mode::leader, 0x100000001, 1),
                  synthetic::server("s2", Mode::follower, 0x100000001, 2),
                  synthetic::server("s3", Mode::follower, 0x100000001, 3)};
  facts.round_trip = trip;
  auto report = judge(facts);
  CHECK(report.verdict == Verdict::critical);
  const auto* failed = synthetic::find(report.findings, "auth-failed");
  REQUIRE(failed);
  CHECK_THAT(failed->message, Contains("s1 and s2 refused SASL DIGEST-MD5 as zkverify: the server refused it") &&
                                  Contains("SASL DIGEST-MD5 as zkverify with s3 failed: this host's SASL library") &&
                                  Contains("--sasl-password-file"));
  CHECK_FALSE(synthetic::find(report.findings, "round-trip-failed"));
  CHECK_FALSE(synthetic::find(report.findings, "sasl-required"));
  CHECK_THAT(render_text(report), Contains("round trip via s1: refused"));
}

TEST_CASE("sasl options: the user needs its password file, a bad file is a usage error naming it, never the secret",
          "[sasl]") {
  TempFile empty("\n", 0600);
  TempFile good("s3cret\n", 0644);
  struct Case {
    std::vector<const char*> flags;
    const char* said;
  };
  const std::vector<Case> cases{
      {{"--sasl-user", "kafka"}, "--sasl-password-file"},
      {{"--sasl-password-file", good.path().c_str()}, "--sasl-user"},
      {{"--sasl-user", "kafka", "--sasl-password-file", empty.path().c_str()}, "is empty"},
      {{"--sasl-user", "kafka", "--sasl-password-file", "/nonexistent/zkverify-password"}, "cannot open it"},
      {{"--sasl-user", "", "--sasl-password-file", good.path().c_str()}, "--sasl-user: the user is empty"},
      {{"--sasl-service", "zk"}, "give --sasl-user (DIGEST-MD5) or --sasl-mechanism GSSAPI"},
      {{"--sasl-mechanism", "GSSAPI", "--sasl-service", "zk/host"}, "--sasl-service 'zk/host': a service name"},
      {{"--sasl-mechanism", "GSSAPI", "--sasl-host", "a@B"}, "--sasl-host 'a@B': a host name"},
  };
  for (const auto& one : cases) {
    zkverify::fake::Ensemble ensemble;
    std::ostringstream out, err;
    verifier::Context context{test_executor(), ensemble.factory(), out, err};
    std::vector<const char*> argv{"zkverify", "quorum", "--servers", "a=127.0.0.1:1"};
    argv.insert(argv.end(), one.flags.begin(), one.flags.end());
    INFO(err.str());
    CHECK(verifier::run_command_line(static_cast<int>(argv.size()), argv.data(), context) == verifier::kExitUsage);
    CHECK_THAT(err.str(), Contains(one.said) && !Contains("s3cret"));
    CHECK(ensemble.sessions_opened() == 0);
  }
  // Others may read it: a warning naming the file, as for --auth-file.
  std::ostringstream err;
  CHECK(verifier::read_password_file(good.path(), err) == "s3cret");
  CHECK_THAT(err.str(), Contains("0644") && Contains("SASL password file") && Contains(good.path()));
}

TEST_CASE(
    "kerberos expiry: a ticket cache's ticket within the hour, a principal within 14 days, a keytab's ticket never",
    "[sasl]") {
  auto now = std::chrono::system_clock::now();
  auto judged_with = [](const KerberosFacts& kerberos) {
    auto facts = synthetic::healthy_five();
    facts.kerberos = kerberos;
    return judge(facts);
  };
  KerberosFacts cache{.source = "ticket cache FILE:/tmp/krb5cc_0", .principal = "kafka@EXAMPLE.COM", .read_at = now};

  cache.ticket_ends = now + 2h;  // a fresh day's ticket: nothing to say
  CHECK(judged_with(cache).verdict == Verdict::healthy);

  cache.ticket_ends = now + 30min;
  cache.renewable_until = now + 24h * 7;
  auto soon = judged_with(cache);
  CHECK(soon.verdict == Verdict::degraded);
  const auto* found = synthetic::find(soon.findings, "kerberos-expiring");
  REQUIRE(found);
  CHECK_THAT(found->message, Contains("kafka@EXAMPLE.COM (ticket cache FILE:/tmp/krb5cc_0): its ticket expires on") &&
                                 Contains("in 30m00s") && Contains("kinit -R"));

  cache.ticket_ends = now - 1min;  // already ended: the sessions' refusal says so too
  cache.renewable_until.reset();
  auto ended = judged_with(cache);  // kept: `found` points into it
  found = synthetic::find(ended.findings, "kerberos-expiring");
  REQUIRE(found);
  CHECK_THAT(found->message, Contains("its ticket expired on") && Contains("kinit), or give --sasl-keytab"));

  // A keytab's tickets come anew: their end says nothing; the principal's expiry does.
  KerberosFacts keytab{.source = "keytab /etc/zk.keytab",
                       .from_keytab = true,
                       .principal = "zk@EXAMPLE.COM",
                       .ticket_ends = now + 1min,
                       .read_at = now};
  CHECK(judged_with(keytab).verdict == Verdict::healthy);
  keytab.principal_expires = now + 24h * 15;
  CHECK(judged_with(keytab).verdict == Verdict::healthy);
  keytab.principal_expires = now + 24h * 3 + 1h;
  auto principal = judged_with(keytab);
  found = synthetic::find(principal.findings, "kerberos-expiring");
  REQUIRE(found);
  CHECK_THAT(found->message, Contains("password or account expires on") && Contains("in 3 days"));
}
