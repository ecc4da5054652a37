// Servers that require every session to authenticate (issue 59): a real 3.8.0 ensemble with
// enforce.auth.enabled=true and enforce.auth.schemes=sasl, as Kafka's security guides set it
// (tests/lab/zklab up --sasl), where a real client that authenticates (kazoo, DIGEST-MD5) writes.
// Without credentials the servers close zkverify's sessions (-124): it must say so and judge what it
// can prove without a session, never "critical" on a healthy ensemble. With --sasl-user its relays
// authenticate every connection (DIGEST-MD5), and every command works; a refusal is named.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"
#include "integration/manifest_config.hpp"

using Catch::Matchers::Contains;

namespace {

// kazoo through Debian's python3, authenticated as the lab's user "kafka" (DIR/sasl/password):
// `create` makes an ephemeral sequential node and prints its path; `exists PATH` prints yes or no;
// `acl PATH` prints the node's ACL ids (SCHEME:ID,...).
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
    elif command == "acl":
        print(",".join(f"{acl.id.scheme}:{acl.id.id}" for acl in zk.get_acls(sys.argv[4])[0]))
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
  auto& ensemble = lab::shared("", "--tls --sasl");
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

namespace {

// --sasl-user and --sasl-password-file for the lab's user "kafka", or with `password` instead.
std::string sasl_flags(const lab::Lab& ensemble, const std::string& password = "") {
  auto file = ensemble.dir() + "/sasl/password";
  if (!password.empty()) {
    file = ensemble.dir() + "/sasl/wrong-password";
    std::ofstream(file) << password << "\n";
  }
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return " --sasl-user kafka --sasl-password-file " + file;
}

// How many sessions the servers' logs say they authorized as `user` by SASL.
int sasl_authorizations(const lab::Lab& ensemble, const std::string& user) {
  auto count = lab::sh("cat " + ensemble.dir() + "/*/server.log 2>/dev/null | grep -c 'adding SASL authorization for " +
                       "authorizationID: " + user + "$' || true");
  return std::stoi(count.out.empty() ? "0" : count.out);
}

}  // namespace

namespace {

// deploy/kubernetes/sasl/'s configuration, as its ConfigMap holds it, with the lab's servers, user,
// password file and a loopback listen address: the gate's quorum passes and the sidecar's serve (a
// sync proof through its own session every cycle) becomes ready.
lab::Run manifests_on_the_lab(const lab::Lab& ensemble) {
  return lab::run_manifest_config({"sasl/zkverify-config.yaml",
                                   {{"servers", ensemble.servers()}, {"sasl-user", "kafka"}},
                                   {{"/etc/zkverify/sasl/password", ensemble.dir() + "/sasl/password"}}});
}

}  // namespace

namespace {

// The commands not run elsewhere in this file, each healthy on a secured lab through `run` (zkverify
// with the lab's credentials and environment): probe, order, safe-to-restart, a short watch.
void every_other_command(const std::function<lab::Run(const std::string&)>& run, const lab::Lab& ensemble,
                         const std::string& flags) {
  auto servers = ensemble.servers();
  auto probe = run("probe --servers " + servers + flags + " --local pzoo-0");
  INFO(probe);
  CHECK(probe.exit_code == 0);
  CHECK_THAT(probe.out, Contains("ready: pzoo-0"));
  auto leader = ensemble.leader();
  auto order = run("order --servers " + servers + flags);
  INFO(order);
  CHECK(order.exit_code == 0);
  CHECK(order.out.ends_with("\n" + leader + "\n"));
  auto follower = leader == "pzoo-0" ? std::string("pzoo-1") : std::string("pzoo-0");
  auto safe = run("safe-to-restart --servers " + servers + flags + " " + follower);
  INFO(safe);
  CHECK(safe.exit_code == 0);
  auto watch = run("watch --servers " + servers + flags + " --duration 3s");
  INFO(watch);
  CHECK(watch.exit_code == 0);
  CHECK_THAT(watch.out, Contains("sessions 5 kept, 0 expired") && Contains("0 lost"));
}

// A wrong password and an unknown user: refused by the servers, named, exit 2, never the secret.
void wrong_password_and_unknown_user(const lab::Lab& ensemble, const std::string& password) {
  auto servers = ensemble.servers();
  for (const char* user : {"kafka", "nobody"}) {
    auto wrong = sasl_flags(ensemble, "not-the-password");
    if (std::string(user) == "nobody") wrong.replace(wrong.find("kafka"), 5, "nobody");
    auto refused = lab::zkverify("quorum --timeout 3s --output json --servers " + servers + wrong);
    INFO(refused);
    CHECK(refused.exit_code == 2);
    const auto* failed = lab::find_finding(refused.json(), "auth-failed");
    REQUIRE(failed);
    CHECK_THAT((*failed)["message"].get<std::string>(), Contains(std::string("refused SASL DIGEST-MD5 as ") + user) &&
                                                            Contains("session_closed_requires_sasl_auth") &&
                                                            Contains("--sasl-password-file"));
    CHECK_THAT(refused.out + refused.err, !Contains("not-the-password") && !Contains(password));
  }
}

}  // namespace

TEST_CASE("SASL DIGEST-MD5 on servers that require it: every command, a roll re-authenticated, refusals named",
          "[auth][integration][part:tls]") {
  auto& ensemble = lab::shared("", "--tls --sasl");
  auto servers = ensemble.servers();
  auto flags = sasl_flags(ensemble);
  std::string password;
  std::ifstream(ensemble.dir() + "/sasl/password") >> password;
  auto before = sasl_authorizations(ensemble, "kafka");

  auto quorum = lab::zkverify("quorum --output json --servers " + servers + flags);
  INFO(quorum);
  REQUIRE(quorum.exit_code == 0);
  auto report = quorum.json();
  CHECK(report["verdict"] == "healthy");
  CHECK(report["round_trip"]["reads_ok"] == 5);
  CHECK_FALSE(lab::find_finding(report, "sasl-required"));
  // The servers' own word: they authorized zkverify's sessions as kafka (one a server, and more).
  CHECK(sasl_authorizations(ensemble, "kafka") >= before + 5);
  // Over the servers' TLS ports: the exchange inside each TLS connection.
  auto tls = ensemble.tls_dir();
  auto secure = lab::zkverify("quorum --output json --servers " + ensemble.secure_servers() + flags + " --tls-ca " +
                              tls + "/ca.pem --tls-cert " + tls + "/client.pem --tls-key " + tls + "/client.key");
  INFO(secure);
  CHECK(secure.exit_code == 0);
  CHECK(secure.json()["round_trip"]["reads_ok"] == 5);

  auto manifests = manifests_on_the_lab(ensemble);
  INFO(manifests);
  CHECK_THAT(manifests.out, Contains("healthy: leader") && Contains("serve ready"));

  every_other_command([](const std::string& args) { return lab::zkverify(args); }, ensemble, flags);
  auto smoke = lab::zkverify("smoke --ops 2 --servers " + servers + flags);
  INFO(smoke);
  CHECK(smoke.exit_code == 0);

  // A roll of the secured ensemble: every server restarted, the sessions on each failing over, each
  // connection authenticated anew; nothing lost, nothing expired.
  auto roll = lab::zkverify("roll --servers " + servers + flags + " --state " + ensemble.dir() +
                            "/../sasl-roll.json --step-timeout 60s --output json -- " + ZKLAB + " restart " +
                            ensemble.dir() + " {}");
  INFO(roll);
  CHECK(roll.exit_code == 0);
  CHECK(roll.json()["complete"] == true);
  CHECK(roll.json()["steps"].size() == 5);
  CHECK(roll.json()["watch"]["sessions_expired"] == 0);
  CHECK(roll.json()["watch"]["writes_lost"] == 0);

  wrong_password_and_unknown_user(ensemble, password);
  // The namespace zkverify created is its SASL identity's alone (item 3), as a digest user's would be.
  CHECK(sasl_client(ensemble, "acl /zkverify").out == "sasl:kafka\n");
}

namespace {

// zkverify on a --kerberos lab: KRB5_CONFIG names the lab's realm, as a pod's environment would.
lab::Run kerberos_zkverify(const lab::Lab& ensemble, const std::string& args) {
  return lab::sh("KRB5_CONFIG=" + ensemble.dir() + "/krb5/krb5.conf timeout 120 $ZKVERIFY " + args);
}

// The lab's realm administered as its admins would (kadmin.local on the KDC's database).
std::string kadmin(const lab::Lab& ensemble, const std::string& query) {
  auto krb5 = ensemble.dir() + "/krb5";
  return "KRB5_CONFIG=" + krb5 + "/krb5.conf KRB5_KDC_PROFILE=" + krb5 +
         "/kdc.conf timeout 30 /usr/sbin/kadmin.local -r ZKLAB.TEST -q '" + query + "'";
}

// Over the lab's TLS ports, the relay authenticates inside TLS; with the servers listed by a name
// their principals do not use (localhost), --sasl-host names the one they do.
void over_tls_by_another_name(const lab::Lab& ensemble, const std::string& keytab) {
  auto tls = ensemble.tls_dir();
  auto secure = ensemble.secure_servers();
  auto by_localhost = lab::sh("echo '" + secure + "' | sed 's/127.0.0.1/localhost/g'").out;
  by_localhost.erase(by_localhost.find_last_not_of('\n') + 1);
  auto quorum = kerberos_zkverify(ensemble, "quorum --output json --servers " + by_localhost + keytab +
                                                " --sasl-host 127.0.0.1 --tls-ca " + tls + "/ca.pem --tls-cert " + tls +
                                                "/client.pem --tls-key " + tls + "/client.key --tls-no-hostname-check");
  INFO(quorum);
  CHECK(quorum.exit_code == 0);
  CHECK(quorum.json()["round_trip"]["reads_ok"] == 5);
}

// A ticket cache whose ticket lives `life` (kinit -l), at `cache`; when it was obtained.
std::chrono::steady_clock::time_point short_ticket(const lab::Lab& ensemble, const std::string& cache,
                                                   const std::string& life) {
  auto krb5 = ensemble.dir() + "/krb5";
  REQUIRE(lab::sh("KRB5_CONFIG=" + krb5 + "/krb5.conf KRB5CCNAME=FILE:" + cache + " timeout 30 kinit -l " + life +
                  " -k -t " + krb5 + "/zkverify.keytab zkverify@ZKLAB.TEST")
              .exit_code == 0);
  return std::chrono::steady_clock::now();
}

// kerberos-expiring: a ticket cache's ticket within its last hour (kinit -l 30m), then a keytab's
// principal that expires in three days (kadmin's modprinc -expire), both from Kerberos's own answers.
void expiry_named(const lab::Lab& ensemble, const std::string& servers) {
  auto krb5 = ensemble.dir() + "/krb5";
  short_ticket(ensemble, ensemble.dir() + "/short.ccache", "30m");
  auto cache = "KRB5CCNAME=FILE:" + ensemble.dir() + "/short.ccache ";
  auto with_cache = lab::sh(cache + "KRB5_CONFIG=" + krb5 + "/krb5.conf timeout 120 $ZKVERIFY quorum --servers " +
                            servers + " --sasl-mechanism GSSAPI");
  INFO(with_cache);
  CHECK(with_cache.exit_code == 1);
  CHECK_THAT(with_cache.out, Contains("kerberos-expiring") && Contains("zkverify@ZKLAB.TEST (ticket cache FILE:") &&
                                 Contains("its ticket expires on") && Contains("read back on 5/5"));

  REQUIRE(lab::sh(kadmin(ensemble, "modprinc -expire \"+3 days\" zkverify")).exit_code == 0);
  auto expiring =
      kerberos_zkverify(ensemble, "quorum --servers " + servers + " --sasl-keytab " + krb5 + "/zkverify.keytab");
  REQUIRE(lab::sh(kadmin(ensemble, "modprinc -expire never zkverify")).exit_code == 0);
  INFO(expiring);
  CHECK(expiring.exit_code == 1);
  CHECK_THAT(expiring.out, Contains("kerberos-expiring") && Contains("password or account expires on") &&
                               Contains("in 3 days") && Contains("read back on 5/5"));
}

// A ticket that has run out, and none at all: each refusal in Kerberos's words, the lapse said too.
void lapsed_and_missing_tickets(const lab::Lab& ensemble, const std::string& servers, const std::string& lapsed) {
  auto with_cache = [&](const std::string& cache) {
    return lab::sh("KRB5CCNAME=FILE:" + cache + " KRB5_CONFIG=" + ensemble.dir() +
                   "/krb5/krb5.conf timeout 120 $ZKVERIFY quorum --timeout 3s --servers " + servers +
                   " --sasl-mechanism GSSAPI");
  };
  auto expired = with_cache(lapsed);
  INFO(expired);
  CHECK(expired.exit_code == 2);
  CHECK_THAT(expired.out, Contains("auth-failed") && Contains("(Ticket expired)") && Contains("kerberos-expiring") &&
                              Contains("its ticket expired on"));
  auto missing = with_cache(ensemble.dir() + "/no.ccache");
  INFO(missing);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.out, Contains("auth-failed") && Contains("No Kerberos credentials available"));
}

// A namespace another principal made (creator-only, as SASL sessions create theirs): named as one
// zkverify may not use, not a failed write.
void namespace_of_another_principal(const lab::Lab& ensemble, const std::string& servers) {
  auto other = ensemble.dir() + "/other.keytab";
  REQUIRE(
      lab::sh(kadmin(ensemble, "addprinc -randkey other") + " && " + kadmin(ensemble, "ktadd -k " + other + " other"))
          .exit_code == 0);
  auto theirs = kerberos_zkverify(
      ensemble, "quorum --namespace /team-a --servers " + servers + " --sasl-mechanism GSSAPI --sasl-keytab " + other);
  INFO(theirs);
  REQUIRE(theirs.exit_code == 0);
  auto refused = kerberos_zkverify(ensemble, "quorum --namespace /team-a --servers " + servers +
                                                 " --sasl-mechanism GSSAPI --sasl-keytab " + ensemble.dir() +
                                                 "/krb5/zkverify.keytab");
  INFO(refused);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.out,
             Contains("auth-failed") && Contains("may not use the namespace /team-a") && Contains("(no_auth)"));
}

}  // namespace

TEST_CASE("SASL GSSAPI against a real KDC: every session by Kerberos, a failover re-authenticated, each failure named",
          "[auth][integration][part:tls]") {
  lab::Lab ensemble("", "--version 3.9.3 --tls --kerberos");
  auto servers = ensemble.servers();
  auto krb5 = ensemble.dir() + "/krb5";
  auto keytab = " --sasl-mechanism GSSAPI --sasl-keytab " + krb5 + "/zkverify.keytab";
  auto lapsed = ensemble.dir() + "/lapsed.ccache";
  auto lapsed_from = short_ticket(ensemble, lapsed, "5s");  // run out by the time it is used below

  auto quorum = kerberos_zkverify(ensemble, "quorum --output json --servers " + servers + keytab);
  INFO(quorum);
  REQUIRE(quorum.exit_code == 0);
  CHECK(quorum.json()["round_trip"]["reads_ok"] == 5);
  CHECK(sasl_authorizations(ensemble, "zkverify@ZKLAB.TEST") >= 5);  // the servers' word: Kerberos, as zkverify
  over_tls_by_another_name(ensemble, keytab);

  auto step =
      kerberos_zkverify(ensemble, "step --servers " + servers + keytab + " --restart pzoo-0 --step-timeout 60s -- " +
                                      ZKLAB + " restart " + ensemble.dir() + " pzoo-0");
  INFO(step);
  CHECK(step.exit_code == 0);
  CHECK_THAT(step.out, Contains("0 expired") && Contains("0 lost"));
  expiry_named(ensemble, servers);
  std::this_thread::sleep_until(lapsed_from + std::chrono::seconds(6));
  lapsed_and_missing_tickets(ensemble, servers, lapsed);
  namespace_of_another_principal(ensemble, servers);

  // A principal the KDC does not know: named from Kerberos's own answer.
  auto ghost = ensemble.dir() + "/ghost.keytab";
  REQUIRE(lab::sh(kadmin(ensemble, "addprinc -randkey ghost") + " && " +
                  kadmin(ensemble, "ktadd -k " + ghost + " ghost") + " && " + kadmin(ensemble, "delprinc -force ghost"))
              .exit_code == 0);
  auto unknown = kerberos_zkverify(
      ensemble, "quorum --timeout 3s --servers " + servers + " --sasl-mechanism GSSAPI --sasl-keytab " + ghost);
  INFO(unknown);
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.out, Contains("auth-failed") && Contains("SASL GSSAPI with") &&
                              Contains("'ghost@ZKLAB.TEST' not found in Kerberos database"));

  // The KDC down: said so, not a round trip's timeout.
  REQUIRE(lab::sh("kill $(cat " + krb5 + "/kdc.pid)").exit_code == 0);
  auto no_kdc = kerberos_zkverify(ensemble, "quorum --timeout 3s --servers " + servers + keytab);
  INFO(no_kdc);
  CHECK(no_kdc.exit_code == 2);
  CHECK_THAT(no_kdc.out, Contains("auth-failed") && Contains("KDC"));
}
