// TLS: the relay's own-process check, the certificates' expiry
// findings, the options' usage errors, the PEM files, and handshakes with fake peers and with a
// python3 TLS server (the certificate's name checked against the host as listed).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"
#include "fake_keeper.hpp"
#include "model/judge/checks.hpp"
#include "probes/four_letter.hpp"
#include "probes/relay.hpp"
#include "probes/tls.hpp"
#include "synthetic.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;
using namespace zkverify;

namespace {

CertificateFacts certificate(const std::string& subject, std::chrono::system_clock::time_point not_after) {
  return {subject, "CN=lab CA", not_after - std::chrono::hours(24 * 30), not_after, {"DNS:localhost"}};
}

}  // namespace

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

namespace {

std::string test_pem(const std::string& name) { return std::string(ZKVERIFY_TEST_DATA) + "/tls/" + name; }

std::shared_ptr<const zkverify::probes::TlsClient> test_client() {
  return std::make_shared<const zkverify::probes::TlsClient>(
      zkverify::probes::TlsSettings{test_pem("ca.pem"), test_pem("client.pem"), test_pem("client.key"), true});
}

zkverify::probes::ProbeLimits tls_limits(std::chrono::milliseconds span) {
  zkverify::probes::ProbeLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + span;
  limits.connect_timeout = limits.exchange_timeout = span;
  limits.tls = test_client();
  return limits;
}

ServerAddress address_of(const ::fake::Peer& peer) { return {"peer", "127.0.0.1", peer.port(), {}, {}}; }

}  // namespace

TEST_CASE("tls client: PEM files are read once, and what is wrong with one is named") {
  using zkverify::probes::TlsClient;
  using zkverify::probes::TlsSettings;
  auto client = test_client();
  REQUIRE(client->client_certificate());
  CHECK(client->client_certificate()->subject == "CN=zkverify-client");
  CHECK(client->client_certificate()->issuer == "CN=zkverify test CA");
  CHECK_FALSE(client->changed());
  CHECK_THROWS_WITH(TlsClient(TlsSettings{test_pem("ca.pem"), test_pem("client.pem"), test_pem("other.key"), true}),
                    Contains("other.key does not belong to the certificate of --tls-cert"));
  CHECK_THROWS_WITH(TlsClient(TlsSettings{test_pem("ca.pem"), test_pem("client.pem"), test_pem("ca.pem"), true}),
                    Contains("ca.pem: no unencrypted PEM private key in it"));
  CHECK_THROWS_WITH(TlsClient(TlsSettings{test_pem("client.key"), std::nullopt, std::nullopt, true}),
                    Contains("--tls-ca " + test_pem("client.key") + ": no PEM certificate in it"));
}

TEST_CASE("tls source: a renewal is picked up when the files change, a half-written one waits") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("zkverify-tls-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(test_pem("client.pem"), dir / "tls.crt", fs::copy_options::overwrite_existing);
  fs::copy_file(test_pem("client.key"), dir / "tls.key", fs::copy_options::overwrite_existing);
  zkverify::probes::TlsSource source(
      {test_pem("ca.pem"), (dir / "tls.crt").string(), (dir / "tls.key").string(), true});
  auto first = source.current();
  CHECK_FALSE(source.renew_if_changed().renewed);
  fs::copy_file(test_pem("other.key"), dir / "tls.key.new");
  fs::rename(dir / "tls.key.new", dir / "tls.key");  // as the kubelet swaps: a new inode
  auto half = source.renew_if_changed();
  CHECK_FALSE(half.renewed);
  CHECK_THAT(half.error, Contains("does not belong"));
  CHECK(source.current() == first);  // the old one stays
  fs::copy_file(test_pem("client.key"), dir / "tls.key.new");
  fs::rename(dir / "tls.key.new", dir / "tls.key");
  CHECK(source.renew_if_changed().renewed);
  CHECK(source.current() != first);
  fs::remove_all(dir);
}

TEST_CASE("tls over fake peers: a stalled handshake costs its deadline, a plain port is said to be one") {
  using ::fake::Behaviour;
  ::fake::Peer stalling({}, {Behaviour::stall, ""});
  auto started = std::chrono::steady_clock::now();
  auto stalled = zkverify::probes::ask_word(test_executor(), address_of(stalling), "srvr", tls_limits(400ms));
  CHECK(std::chrono::steady_clock::now() - started < 1500ms);
  CHECK(stalled.error == ProbeError::tls_failed);
  CHECK(stalled.tls_failure == TlsFailure::handshake_stalled);
  CHECK_THAT(describe(stalled), Contains("the TLS handshake did not end within the deadline"));

  ::fake::Peer plain({{"srvr", {Behaviour::answer, capture("srvr_follower.txt")}}});
  auto answered = zkverify::probes::ask_word(test_executor(), address_of(plain), "srvr", tls_limits(2s));
  CHECK(answered.error == ProbeError::tls_failed);
  CHECK(answered.tls_failure == TlsFailure::port_speaks_plain);
  CHECK_THAT(answered.detail, Contains("this port speaks plain TCP, not TLS"));
}

namespace {

// A listener on `address` (127.0.0.1 unless told; a port the kernel picks); its fd and port.
std::pair<int, std::uint16_t> loopback_listener(std::uint32_t address = INADDR_LOOPBACK) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(address);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&bound), sizeof bound) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  return {fd, ntohs(bound.sin_port)};
}

// Accepts one connection; the endpoint it came from.
boost::asio::ip::tcp::endpoint accepted_from(int listener, int& accepted) {
  sockaddr_in peer{};
  socklen_t length = sizeof peer;
  accepted = ::accept(listener, reinterpret_cast<sockaddr*>(&peer), &length);
  REQUIRE(accepted >= 0);
  return {boost::asio::ip::address_v4(ntohl(peer.sin_addr.s_addr)), ntohs(peer.sin_port)};
}

}  // namespace

// The relay listens on 127.0.0.1 or on another loopback address (one per server of a session).
TEST_CASE("tls relay: a connection from this process is its own, one from another process is not") {
  for (std::uint32_t listen_on : {INADDR_LOOPBACK, INADDR_LOOPBACK + 2}) {
    auto [listener, port] = loopback_listener(listen_on);
    boost::asio::ip::tcp::endpoint relay(boost::asio::ip::address_v4(listen_on), port);
    INFO("relay on " << relay);
    int own = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(listen_on);
    to.sin_port = htons(port);
    REQUIRE(::connect(own, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
    int accepted = -1;
    auto peer = accepted_from(listener, accepted);
    CHECK(zkverify::probes::connection_is_ours(peer, relay));
    // The same port on another address is another listener's: not this connection.
    auto elsewhere = listen_on == INADDR_LOOPBACK ? INADDR_LOOPBACK + 3 : INADDR_LOOPBACK;
    CHECK_FALSE(zkverify::probes::connection_is_ours(peer, {boost::asio::ip::address_v4(elsewhere), port}));
    ::close(accepted);
    ::close(own);

    // Another process (as another user on a shared host would be) holds the connecting socket.
    auto command = "timeout 10 python3 -c 'import socket, time; s = socket.create_connection((\"" +
                   relay.address().to_string() + "\", " + std::to_string(port) + ")); time.sleep(1)' &";
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK_FALSE(zkverify::probes::connection_is_ours(accepted_from(listener, accepted), relay));
    ::close(accepted);
    ::close(listener);
  }
}

namespace {

// Records the servers each session is opened on, and opens it on `inner`.
class RecordingFactory final : public zkverify::probes::KeeperFactory {
 public:
  explicit RecordingFactory(zkverify::probes::KeeperFactory& inner) : inner_(inner) {}
  std::unique_ptr<zkverify::probes::Keeper> open(const std::vector<zkverify::ServerAddress>& servers,
                                                 const zkverify::probes::KeeperOptions& options,
                                                 zkverify::probes::Keeper::Listener listener) override {
    opened.push_back(servers);
    return inner_.open(servers, options, std::move(listener));
  }
  std::vector<std::vector<zkverify::ServerAddress>> opened;

 private:
  zkverify::probes::KeeperFactory& inner_;
};

}  // namespace

// The C client tells servers apart by address alone: relays that shared 127.0.0.1 kept a session
// that failed over from ever being moved back home (Keeper::return_home).
TEST_CASE("tls relay: a session reaches each of its servers through a relay on a loopback address of its own") {
  zkverify::fake::Ensemble ensemble;
  RecordingFactory recording(ensemble.factory());
  zkverify::probes::RelayKeeperFactory factory(recording, test_executor(),
                                               {[client = test_client()] { return client; }, std::nullopt});
  const std::vector<zkverify::ServerAddress> servers{{"pzoo-0", "pzoo-0.pzoo", 2281, {}, {}},
                                                     {"pzoo-1", "pzoo-1.pzoo", 2281, {}, {}},
                                                     {"zoo-0", "zoo-0.zoo", 2281, {}, {}}};
  auto session = factory.open(servers, {});
  REQUIRE(recording.opened.size() == 1);
  const auto& relayed = recording.opened.front();
  REQUIRE(relayed.size() == servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    CHECK(relayed[i].name == servers[i].name);
    CHECK(relayed[i].host == "127.0.0." + std::to_string(i + 1));
    CHECK(relayed[i].port != 0);
  }
  session->close(std::chrono::steady_clock::now() + 2s);
}

namespace {

// A TLS server on loopback presenting CERTIFICATE (python3's ssl module: the tests need no other
// server), answering each connection's first word with a srvr capture. It listens on a socket this
// process bound (passed as fd 3: no port is chosen twice) and is stopped by its pid. `Ending`: it
// closes with close_notify (TLS 1.3), or hangs up after its reply without one (TLS 1.2, whose
// sessions are the ones OpenSSL would then retire).
class TlsPeer {
 public:
  enum class Ending { close_notify, hang_up_tls12 };
  explicit TlsPeer(const std::string& certificate, Ending ending = Ending::close_notify) {
    auto [listener, port] = loopback_listener();
    port_ = port;
    const char* script =
        "import socket, ssl, sys\n"
        "context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
        "context.load_cert_chain(sys.argv[1], sys.argv[2])\n"
        "hang_up = sys.argv[4] == 'hang-up'\n"
        "if hang_up: context.maximum_version = ssl.TLSVersion.TLSv1_2\n"
        "reply = open(sys.argv[3], 'rb').read()\n"
        "listener = socket.socket(fileno=3)\n"
        "while True:\n"
        "    connection, _ = listener.accept()\n"
        "    connection.settimeout(5)\n"
        "    try:\n"
        "        tls = context.wrap_socket(connection, server_side=True)\n"
        "        tls.recv(4)\n"
        "        tls.sendall(reply)\n"
        "        if hang_up: tls.close()\n"
        "        else: tls.unwrap()\n"
        "    except (ssl.SSLError, OSError):\n"
        "        pass\n"
        "    connection.close()\n";
    auto key = test_pem("server.key");
    auto reply = std::string(ZKVERIFY_TEST_DATA) + "/srvr_follower.txt";
    const char* ending_word = ending == Ending::hang_up_tls12 ? "hang-up" : "close-notify";
    std::vector<const char*> argv{"timeout",           "30",        "python3",     "-c",        script,
                                  certificate.c_str(), key.c_str(), reply.c_str(), ending_word, nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, listener, 3);
    int spawned = posix_spawnp(&pid_, "timeout", &actions, nullptr, const_cast<char* const*>(argv.data()), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(listener);
    REQUIRE(spawned == 0);
  }
  ~TlsPeer() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  TlsPeer(const TlsPeer&) = delete;
  TlsPeer& operator=(const TlsPeer&) = delete;
  ServerAddress address() const { return {"peer", "127.0.0.1", port_, {}, {}}; }

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

// srvr over TLS trusting the test server CA only (no client certificate), with or without the name
// check; through `client` when given (its sessions are kept for the next handshakes).
zkverify::Exchange ask_over_tls(const TlsPeer& peer, bool check_hostname, const std::string& ca = "server-ca.pem",
                                std::shared_ptr<const zkverify::probes::TlsClient> client = nullptr) {
  zkverify::probes::ProbeLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + 10s;
  limits.connect_timeout = limits.exchange_timeout = 10s;
  limits.tls = client ? std::move(client)
                      : std::make_shared<const zkverify::probes::TlsClient>(
                            zkverify::probes::TlsSettings{test_pem(ca), std::nullopt, std::nullopt, check_hostname});
  return zkverify::probes::ask_word(test_executor(), peer.address(), "srvr", limits);
}

}  // namespace

TEST_CASE("tls: a server's certificate must name the host as --servers lists it, unless told not to check") {
  TlsPeer named(test_pem("server-loopback.pem"));  // IP:127.0.0.1, DNS:localhost
  auto answered = ask_over_tls(named, true);
  INFO(describe(answered));
  CHECK(answered.error == ProbeError::ok);
  CHECK_THAT(answered.reply, Contains("Zookeeper version:"));
  REQUIRE(answered.certificate);
  CHECK(answered.certificate->subject == "CN=zkverify-server");

  TlsPeer elsewhere(test_pem("server-elsewhere.pem"));  // DNS:elsewhere.example only, from the same CA
  auto refused = ask_over_tls(elsewhere, true);
  INFO(describe(refused));
  CHECK(refused.error == ProbeError::tls_failed);
  CHECK(refused.tls_failure == TlsFailure::name_mismatch);
  CHECK(refused.reply.empty());  // nothing was asked of a server that is not the one listed
  CHECK_THAT(refused.detail, Contains("the server's certificate is for DNS:elsewhere.example, not for 127.0.0.1"));

  auto unchecked = ask_over_tls(elsewhere, false);  // --tls-no-hostname-check: the chain alone
  INFO(describe(unchecked));
  CHECK(unchecked.error == ProbeError::ok);
  CHECK_THAT(unchecked.reply, Contains("Zookeeper version:"));
}

TEST_CASE("tls: after the first handshake with a server every connection resumes its session, also after hang-ups") {
  using Ending = TlsPeer::Ending;
  for (auto ending : {Ending::close_notify, Ending::hang_up_tls12}) {
    TlsPeer peer(test_pem("server-loopback.pem"), ending);
    auto client = std::make_shared<const zkverify::probes::TlsClient>(
        zkverify::probes::TlsSettings{test_pem("server-ca.pem"), std::nullopt, std::nullopt, true});
    std::vector<bool> resumed;
    for (int i = 0; i < 4; ++i) {
      auto asked = ask_over_tls(peer, true, "", client);
      INFO(describe(asked));
      REQUIRE(asked.error == ProbeError::ok);
      CHECK(asked.certificate);  // also on a resumed handshake: from the session
      resumed.push_back(asked.tls_resumed);
    }
    INFO((ending == Ending::hang_up_tls12 ? "TLS 1.2, hung up" : "TLS 1.3, close_notify"));
    CHECK(resumed == std::vector<bool>{false, true, true, true});
  }
}

TEST_CASE("tls: a chain to another CA, or an expired certificate, is refused before anything is asked, and named") {
  TlsPeer named(test_pem("server-loopback.pem"));
  auto stranger = ask_over_tls(named, true, "ca.pem");  // --tls-ca names a CA that did not sign it
  INFO(describe(stranger));
  CHECK(stranger.error == ProbeError::tls_failed);
  CHECK(stranger.tls_failure == TlsFailure::unknown_ca);
  CHECK(stranger.reply.empty());
  // The name check alone would not have refused it: the chain is checked whatever the name.
  CHECK(ask_over_tls(named, false, "ca.pem").tls_failure == TlsFailure::unknown_ca);

  TlsPeer expired(test_pem("server-expired.pem"));  // for 127.0.0.1, from its CA, expired on 2020-01-02
  auto refused = ask_over_tls(expired, true, "expired-server-ca.pem");
  INFO(describe(refused));
  CHECK(refused.error == ProbeError::tls_failed);
  CHECK(refused.tls_failure == TlsFailure::expired);
  CHECK(refused.reply.empty());
  CHECK_THAT(refused.detail, Contains("expired on 2020-01-02"));
}
