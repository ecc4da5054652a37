// TLS sessions on a real server (the TLS-only lab of integration/tls_test.cpp, Debian's 3.8.0 on
// Netty): one TLS client's handshakes after the first resume, as the gate and the sidecar rely on.

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "integration/lab.hpp"
#include "probes/executor.hpp"
#include "probes/four_letter.hpp"
#include "probes/tls.hpp"

using namespace std::chrono_literals;

// The JDK renews a TLS 1.2 session's ticket at each resumption, and OpenSSL then retires the session
// it offered without telling of the renewed one: unless kept (keep_session_resumable), every other
// handshake was a full one.
TEST_CASE("TLS: one client's srvr to a real server five times, every handshake after the first resumed",
          "[integration][tls][part:tls]") {
  auto& ensemble = lab::shared("", "--tls-only");
  auto tls = lab::sh(ZKLAB " tls-dir " + ensemble.dir()).out;
  tls = tls.substr(0, tls.find('\n'));
  auto servers = ensemble.servers();
  auto first = servers.substr(0, servers.find(','));  // pzoo-0=127.0.0.1:PORT
  zkverify::ServerAddress server{first.substr(0, first.find('=')),
                                 "127.0.0.1",
                                 static_cast<std::uint16_t>(std::stoi(first.substr(first.rfind(':') + 1))),
                                 {},
                                 {}};
  zkverify::probes::Executor executor;
  zkverify::probes::ProbeLimits limits;
  limits.tls = std::make_shared<const zkverify::probes::TlsClient>(
      zkverify::probes::TlsSettings{tls + "/ca.pem", tls + "/client.pem", tls + "/client.key", true});
  std::vector<bool> resumed;
  for (int i = 0; i < 5; ++i) {
    limits.deadline = std::chrono::steady_clock::now() + 10s;
    limits.connect_timeout = limits.exchange_timeout = 10s;
    auto asked = zkverify::probes::ask_word(executor, server, "srvr", limits);
    INFO(server.endpoint() << ": " << describe(asked));
    REQUIRE(asked.error == zkverify::ProbeError::ok);
    resumed.push_back(asked.tls_resumed);
  }
  CHECK(resumed == std::vector<bool>{false, true, true, true, true});
}
