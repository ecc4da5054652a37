// TLS sessions on a real server (the TLS-only lab of integration/tls_test.cpp, Debian's 3.8.0 on
// Netty): one TLS client's handshakes after the first resume, also beside an open connection, as the
// gate and the sidecar rely on.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include "integration/lab.hpp"
#include "probes/executor.hpp"
#include "probes/four_letter.hpp"
#include "probes/tls.hpp"
#include "probes/tls_connect.hpp"

using namespace std::chrono_literals;

namespace {

struct TlsServer {
  zkverify::ServerAddress server;
  std::shared_ptr<const zkverify::probes::TlsClient> client;
};

// The TLS-only lab's first server, and a TLS client of its own (no session kept yet).
TlsServer first_tls_server() {
  auto& ensemble = lab::shared("", "--tls-only");
  auto tls = ensemble.tls_dir();
  auto servers = ensemble.servers();
  auto first = servers.substr(0, servers.find(','));  // pzoo-0=127.0.0.1:PORT
  zkverify::ServerAddress server{first.substr(0, first.find('=')),
                                 "127.0.0.1",
                                 static_cast<std::uint16_t>(std::stoi(first.substr(first.rfind(':') + 1))),
                                 {},
                                 {}};
  return {server, std::make_shared<const zkverify::probes::TlsClient>(
                      zkverify::probes::TlsSettings{tls + "/ca.pem", tls + "/client.pem", tls + "/client.key", true})};
}

zkverify::probes::ProbeLimits limits_for(const TlsServer& target) {
  zkverify::probes::ProbeLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + 10s;
  limits.connect_timeout = limits.exchange_timeout = 10s;
  limits.tls = target.client;
  return limits;
}

// Two handshakes with the server, the second while the first connection is still open; whether each resumed.
boost::asio::awaitable<std::vector<bool>> two_open_handshakes(TlsServer target) {
  namespace tls = zkverify::probes::tls;
  auto executor = co_await boost::asio::this_coro::executor;
  auto limits = limits_for(target);
  std::vector<zkverify::Exchange> exchanges(2);
  tls::Stream first(executor, target.client->context()), second(executor, target.client->context());
  std::vector<boost::asio::ip::address> addresses{boost::asio::ip::make_address("127.0.0.1")};
  bool first_up =
      co_await tls::connect(first, *target.client, "127.0.0.1", addresses, target.server.port, limits, exchanges[0]);
  bool second_up = first_up && co_await tls::connect(second, *target.client, "127.0.0.1", addresses, target.server.port,
                                                     limits, exchanges[1]);
  for (auto* stream : {&first, &second}) zkverify::probes::keep_session_resumable(stream->native_handle());
  if (!first_up || !second_up) co_return std::vector<bool>{};
  co_return std::vector<bool>{exchanges[0].tls_resumed, exchanges[1].tls_resumed};
}

}  // namespace

// The JDK renews a TLS 1.2 session's ticket at each resumption, and OpenSSL then retires the session
// it offered without telling of the renewed one: unless kept (keep_renewed_session), every other
// handshake was a full one.
TEST_CASE("TLS: one client's srvr to a real server five times, every handshake after the first resumed",
          "[integration][tls][part:tls]") {
  auto target = first_tls_server();
  zkverify::probes::Executor executor;
  std::vector<bool> resumed;
  for (int i = 0; i < 5; ++i) {
    auto asked = zkverify::probes::ask_word(executor, target.server, "srvr", limits_for(target));
    INFO(target.server.endpoint() << ": " << describe(asked));
    REQUIRE(asked.error == zkverify::ProbeError::ok);
    resumed.push_back(asked.tls_resumed);
  }
  CHECK(resumed == std::vector<bool>{false, true, true, true, true});
}

// OpenSSL retires the offered session when the handshake ends, not the connection: a handshake that
// began while a resumed connection was still open (the gate's conf beside its relays) offered the
// retired session and was a full one, until the renewed session was kept at the handshake's end.
TEST_CASE("TLS: a handshake while a resumed connection to the same real server is open resumes too",
          "[integration][tls][part:tls]") {
  auto target = first_tls_server();
  zkverify::probes::Executor executor;
  auto first = zkverify::probes::ask_word(executor, target.server, "srvr", limits_for(target));  // full: kept
  INFO(target.server.endpoint() << ": " << describe(first));
  REQUIRE(first.error == zkverify::ProbeError::ok);
  auto both = boost::asio::co_spawn(executor.io(), two_open_handshakes(target), boost::asio::use_future);
  REQUIRE(both.wait_for(20s) == std::future_status::ready);
  CHECK(both.get() == std::vector<bool>{true, true});
}

// The C client tells servers apart by address alone, so a watch session that failed over could go
// back to its own server only if the relays it reaches its servers through listen on different
// addresses (127.0.0.1, .2, ...): on one, the session stayed where it landed for the whole run, and
// the server it fled to held two of the watch's sessions (with maxClientCnxns=3, the step's checks
// found no room).
TEST_CASE("TLS: a watch session that failed over goes back to its own server once it serves again",
          "[integration][tls][part:tls]") {
  auto& ensemble = lab::shared("", "--tls-only");
  auto tls = ensemble.tls_dir();
  auto flags = " --tls-ca " + tls + "/ca.pem --tls-cert " + tls + "/client.pem --tls-key " + tls + "/client.key";
  std::string away = ensemble.leader() == "zoo-1" ? "zoo-0" : "zoo-1";  // a follower: no election
  auto run = lab::sh("{ $ZKVERIFY watch --duration 30s --output json --servers " + ensemble.servers() + flags +
                     " & W=$!; sleep 3; " ZKLAB " stop " + ensemble.dir() + " " + away + " >/dev/null 2>&1; sleep 4; " +
                     ZKLAB " start " + ensemble.dir() + " " + away + " >/dev/null 2>&1; wait $W; }");
  INFO(run);
  REQUIRE(run.exit_code == 0);
  auto lines = lab::event_lines(run.out);
  // Whether `away`'s session reconnected on its own server (`home`), or on another one.
  auto reconnected = [&](bool home) {
    return std::ranges::any_of(lines, [&](const nlohmann::json& line) {
      return line["event"] == "reconnected" && line["session"] == away && (line["server"] == away) == home;
    });
  };
  CHECK(reconnected(false));  // it did fail over
  CHECK(reconnected(true));
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.back()["event"] == "summary");
  CHECK(lines.back()["sessions_expired"] == 0);
  CHECK(lines.back()["writes_lost"] == 0);
}
