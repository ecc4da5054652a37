// TLS's pure parts: the relay's /proc/net/tcp reading, the certificates' expiry findings, the
// options' usage errors.

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"
#include "model/judge/checks.hpp"
#include "model/parse/proc_net.hpp"
#include "synthetic.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;
using namespace zkverify;

namespace {

// /proc/self/net/tcp on this machine while a loopback client (port 0xBDB5) held a connection to
// 0xC4C6, plus a TIME_WAIT entry (inode 0) and a listener.
const char* kTable =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 231 1 0 100 0 0 10 0\n"
    "   1: 0100007F:BDB5 0100007F:C4C6 01 00000000:00000000 00:00000000 00000000     0        0 98765 1 0 20 4 30 10 "
    "-1\n"
    "   2: 0100007F:C4C6 0100007F:BDB5 01 00000000:00000000 00:00000000 00000000     0        0 98766 1 0 20 4 30 10 "
    "-1\n"
    "   3: 0100007F:AAAA 0100007F:C4C6 06 00000000:00000000 03:00000E54 00000000     0        0 0 3 0\n";

CertificateFacts certificate(const std::string& subject, std::chrono::system_clock::time_point not_after) {
  return {subject, "CN=lab CA", not_after - std::chrono::hours(24 * 30), not_after, {"DNS:localhost"}};
}

}  // namespace

TEST_CASE("tls relay: the client end of a loopback connection is found by its ports, never a TIME_WAIT one") {
  CHECK(zkverify::loopback_socket_inode(kTable, 0xBDB5, 0xC4C6) == 98765u);
  CHECK(zkverify::loopback_socket_inode(kTable, 0xC4C6, 0xBDB5) == 98766u);  // the relay's own end
  CHECK_FALSE(zkverify::loopback_socket_inode(kTable, 0xAAAA, 0xC4C6));      // TIME_WAIT: nobody's
  CHECK_FALSE(zkverify::loopback_socket_inode(kTable, 0xBDB5, 0x1234));
  CHECK_FALSE(zkverify::loopback_socket_inode("garbage\n\n", 1, 2));
  CHECK(zkverify::socket_inode_of_link("socket:[98765]") == 98765u);
  CHECK_FALSE(zkverify::socket_inode_of_link("pipe:[98765]"));
  CHECK_FALSE(zkverify::socket_inode_of_link("socket:[98x]"));
}

TEST_CASE("tls: certificates expiring within the warning are named, the server's and zkverify's own") {
  auto now = std::chrono::system_clock::now();
  auto facts = synthetic::healthy_five();
  facts.probes[0].srvr_exchange.certificate = certificate("CN=pzoo-0", now + 100h * 24);
  facts.probes[1].srvr_exchange.certificate = certificate("CN=pzoo-1", now + 3h * 24 + 1h);
  facts.tls = TlsCheckFacts{certificate("CN=zkverify-client", now - 1h), 14h * 24, now};
  auto report = judge(facts);
  std::vector<std::string> expiring;
  for (const auto& finding : report.findings)
    if (finding.code == FindingCode::tls_cert_expiring) expiring.push_back(finding.server + ": " + finding.message);
  REQUIRE(expiring.size() == 2);
  CHECK_THAT(expiring[0] + expiring[1], Contains("pzoo-1: pzoo-1's certificate (CN=pzoo-1) expires on"));
  CHECK_THAT(expiring[0] + expiring[1], Contains(", in 3 days"));
  CHECK_THAT(expiring[0] + expiring[1], Contains(": zkverify's client certificate (CN=zkverify-client, --tls-cert) "
                                                 "expired on"));
  CHECK(report.verdict == Verdict::degraded);  // a warning on a healthy ensemble: the gate waits for a renewal
  CHECK(report.servers[0].certificate_days_left == 100);
  CHECK(report.tls->days_left == -1);
  facts.tls->expiry_warning = 1h;  // outside the window, only the expired one stays
  int left = 0;
  for (const auto& finding : judge(facts).findings) left += finding.code == FindingCode::tls_cert_expiring;
  CHECK(left == 1);
}

TEST_CASE("tls options: flags that do not fit are usage errors naming both") {
  command_line::FakeEnsemble ensemble;
  auto says = [&](std::vector<std::string> args, const std::string& message) {
    auto ran = command_line::run(ensemble.zookeeper, std::move(args));
    INFO(ran.err);
    CHECK(ran.exit_code == 64);
    CHECK_THAT(ran.err, Contains(message));
  };
  says({"quorum", "--servers", "a:1", "--tls-key", "k.pem"}, "--tls-key requires --tls-cert");
  says({"quorum", "--servers", "a:1", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "--tls-cert requires --tls-ca");
  says({"quorum", "--servers", "a:1", "--tls-no-hostname-check"}, "--tls-no-hostname-check requires --tls-ca");
  says({"quorum", "--servers", "a:1", "--tls-ca", "/nonexistent/ca.pem"},
       "--tls-ca /nonexistent/ca.pem: cannot be read");
  says({"serve", "--servers", "a:1", "--local", "a:1", "--tls-ca", ZKVERIFY_TEST_DATA "/srvr_leader.txt"},
       "no PEM certificate in it");
  CHECK(ensemble.zookeeper.sessions_opened() == 0);
}
