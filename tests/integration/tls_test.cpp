// A real TLS-only ensemble (Debian's 3.8.0 on Netty: secureClientPort alone, ssl.clientAuth=need,
// PEM stores from the lab's throwaway CA): every command over TLS, and each TLS failure named.

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"
#include "integration/manifest_config.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

// A smoke report without its PASS cases (and their wrapped lines): what a failure message needs.
std::string not_passed(const std::string& report) {
  std::string kept;
  bool in_pass = false;
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(' ')) in_pass = line.starts_with("PASS");
    if (!in_pass) kept += line + "\n";
  }
  return kept;
}

struct TlsLab {
  lab::Lab& ensemble = lab::shared("", "--tls-only");
  std::string tls = ensemble.tls_dir();
  std::string servers = ensemble.servers();
  std::string flags = " --tls-ca " + tls + "/ca.pem --tls-cert " + tls + "/client.pem --tls-key " + tls + "/client.key";
  std::string with(const std::string& command) const { return command + " --servers " + servers + flags; }
};

// Every server's row says `error` (its words in the finding too).
void every_server_says(const lab::Run& run, const std::string& error) {
  INFO(run);
  CHECK(run.exit_code == 2);
  for (const auto& server : run.json()["servers"]) CHECK_THAT(server["error"].get<std::string>(), Contains(error));
}

void healthy_over_tls(const TlsLab& lab) {
  auto run = zkverify(lab.with("quorum --output json --tls-expiry-warning 1d"));
  INFO(run);
  REQUIRE(run.exit_code == 0);
  auto report = run.json();
  CHECK(report["round_trip"]["reads_ok"] == 5);
  for (const auto& server : report["servers"]) {
    CHECK(server["tls"]["subject"] == "CN=" + server["name"].get<std::string>());
    CHECK(server["tls"]["days_left"].get<int>() >= 28);
  }
  CHECK(report["tls"]["client_certificate"]["subject"] == "CN=zkverify-client");
  // Within 40 days every certificate of the lab (30 days) expires: each is named.
  auto warned = zkverify(lab.with("quorum --output json --tls-expiry-warning 40d"));
  INFO(warned);
  CHECK(warned.exit_code == 1);
  int expiring = 0;
  for (const auto& finding : warned.json()["findings"]) expiring += finding["code"] == "tls-cert-expiring";
  CHECK(expiring == 6);  // five servers and zkverify's own
}

void failures_named(const TlsLab& lab) {
  every_server_says(zkverify("quorum --output json --timeout 2s --servers " + lab.servers),
                    "this port speaks TLS: give --tls-ca");
  every_server_says(zkverify("quorum --output json --servers " + lab.servers + " --tls-ca " + lab.tls + "/ca.pem"),
                    "the server requires a client certificate");
  every_server_says(
      zkverify("quorum --output json --servers " + lab.servers + " --tls-ca " + lab.tls + "/ca.pem --tls-cert " +
               lab.tls + "/foreign-client.pem --tls-key " + lab.tls + "/foreign-client.key"),
      "the server refused zkverify's client certificate");
  every_server_says(
      zkverify("quorum --output json --servers " + lab.servers + " --tls-ca " + lab.tls +
               "/foreign-ca.pem --tls-cert " + lab.tls + "/client.pem --tls-key " + lab.tls + "/client.key"),
      "is not signed by a CA of --tls-ca");
  auto mismatched = zkverify("quorum --servers " + lab.servers + " --tls-ca " + lab.tls + "/ca.pem --tls-cert " +
                             lab.tls + "/client.pem --tls-key " + lab.tls + "/pzoo-0.pem");
  CHECK(mismatched.exit_code == 64);
  CHECK_THAT(mismatched.err, Contains("does not belong to the certificate of --tls-cert"));
}

// One server's certificate replaced: the others keep the quorum, and its row says what is wrong.
void bad_server_certificate(const TlsLab& lab, const std::string& kind, const std::string& error) {
  lab::sh(ZKLAB " tls-cert " + lab.ensemble.dir() + " zoo-1 " + kind);
  auto run = zkverify(lab.with("quorum --output json"));
  INFO(kind << ": " << run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.json()["verdict"] == "degraded");
  CHECK_THAT(run.json()["servers"][4]["error"].get<std::string>(), Contains(error));
  lab::sh(ZKLAB " tls-cert " + lab.ensemble.dir() + " zoo-1 good");
}

// serve over TLS while cert-manager renews its client certificate: the kubelet renames the new files
// into place (certificate, then key: a moment where they do not match), the sidecar stays ready,
// says so in its log, and its next cycles use the new one (its not-after gauge moves). By pid, under
// timeout, on a free port.
lab::Run renew_while_serving(const TlsLab& lab) {
  return lab::sh(R"sh(set -eu
w=$(mktemp -d); trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$w"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cp )sh" + lab.tls +
                 R"sh(/client.pem "$w/tls.crt"; cp )sh" + lab.tls + R"sh(/client.key "$w/tls.key"
timeout -k 5 120 "$ZKVERIFY" serve --servers )sh" +
                 lab.servers +
                 " --local pzoo-0 --listen 127.0.0.1:$port "
                 "--interval 500ms --tls-ca " +
                 lab.tls + R"sh(/ca.pem --tls-cert "$w/tls.crt" --tls-key "$w/tls.key" \
  >"$w/serve.log" 2>&1 &
pid=$!
end=$(($(date +%s) + 60))
not_after() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^zkverify_tls_client_not_after_seconds/ { print $2 }'; }
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; do
  [ "$(date +%s)" -lt "$end" ] || { echo "never ready"; cat "$w/serve.log"; exit 1; }; sleep 0.2; done
before=$(not_after)
)sh" ZKLAB R"sh( tls-client-cert )sh" +
                 lab.ensemble.dir() + R"sh( "$w/new" --days 90 >/dev/null
mv "$w/new.pem" "$w/tls.crt"; sleep 1; mv "$w/new.key" "$w/tls.key"
until [ -n "$(not_after)" ] && [ "$(not_after)" != "$before" ]; do
  [ "$(date +%s)" -lt "$end" ] || { echo "not renewed"; cat "$w/serve.log"; exit 1; }; sleep 0.2; done
sleep 1.5  # a few cycles on the new certificate
echo "before $before after $(not_after) readyz $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")"
cat "$w/serve.log"
)sh");
}

// deploy/kubernetes/tls/'s configuration, as its ConfigMap holds it, with the lab's servers, files
// and a loopback listen address in place of the cluster's: the gate Job's quorum passes, the CI
// example's smoke passes, and the sidecar's serve becomes ready.
lab::Run manifests_on_the_lab(const TlsLab& lab) {
  return lab::run_manifest_config({"tls/zkverify-config.yaml",
                                   {{"servers", lab.servers}},
                                   {{"/etc/zkverify/tls/ca.crt", lab.tls + "/ca.pem"},
                                    {"/etc/zkverify/tls/tls.crt", lab.tls + "/client.pem"},
                                    {"/etc/zkverify/tls/tls.key", lab.tls + "/client.key"}},
                                   true});
}

}  // namespace

// --trace over TLS: every server's srvr handshake and the round trip's read, timed in order.
void check_trace_over_tls(TlsLab& lab) {
  auto run = zkverify(lab.with("quorum --trace --output json"));
  INFO(run);
  REQUIRE(run.exit_code == 0);
  std::map<std::string, std::set<std::string>> steps;
  double last_start = 0;
  for (const auto& step : run.json()["timeline"]) {
    CHECK(step["start_ms"].get<double>() <= step["end_ms"].get<double>());
    CHECK(step["start_ms"].get<double>() >= last_start);
    last_start = step["start_ms"].get<double>();
    if (step["server"].is_string()) steps[step["server"].get<std::string>()].insert(step["step"].get<std::string>());
  }
  REQUIRE(steps.size() == 5);
  for (const auto& [server, seen] : steps) {
    INFO(server);
    CHECK((seen.contains("srvr: TLS handshake") || seen.contains("srvr: TLS handshake (resumed)")));
    CHECK(seen.contains("session: sync and read"));
  }
}

TEST_CASE("TLS-only ensemble: every command over TLS, and each failure in words", "[integration][tls][part:tls]") {
  TlsLab lab;
  healthy_over_tls(lab);
  failures_named(lab);
  bad_server_certificate(lab, "expired", "expired on");
  bad_server_certificate(lab, "wrong-name", "is for DNS:elsewhere.example, not for 127.0.0.1");
  CHECK(zkverify(lab.with("quorum --wait 30s")).exit_code == 0);
  check_trace_over_tls(lab);

  auto smoke = zkverify(lab.with("smoke --timeout 10s --ops 2"));  // TLS, not latency (auth_test says why)
  {
    INFO("exit " << smoke.exit_code << ", stderr: " << smoke.err << "\n" << not_passed(smoke.out));
    CHECK(smoke.exit_code == 0);
  }
  CHECK(zkverify(lab.with("probe --local pzoo-0")).exit_code == 0);
  CHECK(zkverify(lab.with("order")).exit_code == 0);
  CHECK(zkverify(lab.with("safe-to-restart zoo-0")).exit_code == 0);

  // A restart under step's watch: its sessions (through the relays) live through it.
  auto step = zkverify(lab.with("step --restart zoo-0 --step-timeout 60s --output json") + " -- " ZKLAB " restart " +
                       lab.ensemble.dir() + " zoo-0");
  INFO(step);
  CHECK(step.exit_code == 0);
  CHECK(step.json()["watch"]["sessions_expired"] == 0);
  CHECK(step.json()["watch"]["writes_lost"] == 0);

  auto manifests = manifests_on_the_lab(lab);
  INFO(manifests);
  CHECK(manifests.exit_code == 0);
  CHECK_THAT(manifests.out, Contains("healthy: leader"));
  CHECK_THAT(manifests.out, Contains("smoke passed"));
  CHECK_THAT(manifests.out, Contains("serve ready"));

  auto renewed = renew_while_serving(lab);
  INFO(renewed);
  CHECK(renewed.exit_code == 0);
  CHECK_THAT(renewed.out, Contains("readyz 200"));
  CHECK_THAT(renewed.out, Contains("TLS files changed: the next connections use them"));

  lab.ensemble.act("stop", "zoo-1");
  auto down = zkverify(lab.with("quorum --output json"));
  CHECK(down.exit_code == 1);
  CHECK(down.json()["verdict"] == "degraded");
}

// The AdminServers over HTTPS only (admin.forceHttps; 3.9 also asks for zkverify's certificate), with
// srvr alone whitelisted: --admin-port is where the membership comes from. One AdminServer's
// certificate from another CA, then an expired one: named in its finding, the others still read.
void admin_over_https(const lab::Lab& ensemble, const std::string& servers, const std::string& flags) {
  // A cold Jetty's first HTTPS answers can take seconds on a loaded machine (seen: no reply within the
  // default deadline with both cores busy): this is about what is read, not how fast.
  auto admin =
      "quorum --timeout 15s --output json --servers " + servers + flags + " --admin-port " + ensemble.admin_ports();
  auto read = zkverify(admin);
  INFO(read);
  CHECK(read.exit_code == 0);
  CHECK_FALSE(lab::find_finding(read.json(), "admin-unavailable"));
  REQUIRE(read.json()["membership_views"].size() == 1);
  CHECK(read.json()["membership_views"][0]["holders"].size() == 5);
  const std::vector<std::pair<std::string, std::string>> broken{{"foreign", "is not signed by a CA of --tls-ca"},
                                                                {"expired", "expired on"}};
  for (const auto& [kind, error] : broken) {
    lab::sh(ZKLAB " tls-admin-cert " + ensemble.dir() + " zoo-1 " + kind);
    auto run = zkverify(admin);
    INFO(kind << ": " << run);
    const auto* finding = lab::find_finding(run.json(), "admin-unavailable");
    REQUIRE(finding);
    CHECK((*finding)["server"] == "zoo-1");
    CHECK_THAT((*finding)["message"].get<std::string>(), Contains(error));
    CHECK(run.json()["membership_views"][0]["holders"].size() == 4);
  }
  lab::sh(ZKLAB " tls-admin-cert " + ensemble.dir() + " zoo-1 good");
}

TEST_CASE("a mixed ensemble of 3.8.0 and 3.9.3 (plain and TLS ports): both healthy, HTTPS AdminServers, a roll",
          "[integration][tls][part:tls]") {
  auto& ensemble = lab::shared("srvr", "--tls --versions 3.8.0,3.8.0,3.8.0,3.9.3,3.9.3");
  auto tls = ensemble.tls_dir();
  auto flags = " --tls-ca " + tls + "/ca.pem --tls-cert " + tls + "/client.pem --tls-key " + tls + "/client.key";
  auto secure = ensemble.secure_servers();
  auto plain = zkverify("quorum --servers " + ensemble.servers());
  {
    INFO(plain);
    CHECK(plain.exit_code == 0);
  }
  auto over_tls = zkverify("quorum --servers " + secure + flags);
  {
    INFO(over_tls);
    CHECK(over_tls.exit_code == 0);
  }
  admin_over_https(ensemble, secure, flags);
  // TLS flags on the plain ports: each server is said to speak plain TCP there.
  auto crossed = zkverify("quorum --output json --servers " + ensemble.servers() + flags);
  every_server_says(crossed, "this port speaks plain TCP, not TLS");

  auto roll =
      zkverify("roll --servers " + secure + flags + " --state " + ensemble.dir() +
               "/../roll-ledger.json --step-timeout 60s --output json -- " ZKLAB " restart " + ensemble.dir() + " {}");
  INFO(roll);
  REQUIRE(roll.exit_code == 0);
  CHECK(roll.json()["complete"] == true);
  CHECK(roll.json()["steps"].size() == 5);
  CHECK(roll.json()["watch"]["sessions_expired"] == 0);
  CHECK(roll.json()["watch"]["writes_lost"] == 0);
  WARN("roll over TLS: " << roll.json()["summary"].get<std::string>());
}
