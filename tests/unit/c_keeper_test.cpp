// The C client behind the keeper seam, on its failure paths (its successful ones run in the
// integration tests against real servers).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "fake_peer.hpp"
#include "loopback_port.hpp"

#include "probes/c_keeper.hpp"
#include "probes/c_session.hpp"
#include "probes/round_trip.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace std::chrono_literals;

namespace {

constexpr auto kKeeperPayload = "round trip payload";
// How far past a deadline a call may return: scheduling, not waiting.
constexpr auto kKeeperSlack = 1s;
// A close returns (it joins the client's threads), also in a process that gets no CPU for seconds:
// the sanitizers' unit tests run at the lowest priority beside the integration tests.
constexpr auto kCloseBound = 5s;

// The C client behind the seam needs no server for its failure paths: a bound socket that does
// not listen refuses every connection.
using loopback::RefusingPort;

}  // namespace

namespace zkverify::probes::c_client {

// The session's strand steps, in the order the C client's threads may produce them.
struct CSessionTestAccess {
  static void opening(CSession& session) { session.opening_ = true; }
  static void connected(CSession& session) { session.event({nullptr, SessionState::connected, std::nullopt, {}, 10s}); }
  static void opened(CSession& session, zhandle_t* handle) { session.opened(handle); }
};

}  // namespace zkverify::probes::c_client

namespace {

void ignore_watch(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/, void* /*context*/) {}

}  // namespace

namespace {

c_client::KnownServer known(std::string name, std::string host, std::uint16_t port,
                            std::vector<std::string> addresses) {
  c_client::KnownServer server{std::move(name), std::move(host), port, {}};
  for (const auto& address : addresses) server.addresses.push_back(boost::asio::ip::make_address(address));
  return server;
}

// As opened() after zookeeper_init on the session's worker: a handle (to a port that refuses) given to it.
void hand_handle(const std::shared_ptr<c_client::CSession>& session, std::uint16_t port) {
  auto hosts = "127.0.0.1:" + std::to_string(port);
  auto* handle = zookeeper_init(hosts.c_str(), &ignore_watch, 10000, nullptr, nullptr, ZOO_NO_LOG_CLIENTENV);
  REQUIRE(handle);
  ask_now(session, [handle](c_client::CSession& self) {
    c_client::CSessionTestAccess::opened(self, handle);
    return true;
  });
}

// The session closed (every handle's zookeeper_close returned) within 5 s.
bool closed_in_time(const std::shared_ptr<c_client::CSession>& session) {
  std::promise<void> closed;
  auto done = closed.get_future();
  tell(session, [&closed](c_client::CSession& self) { self.close(std::move(closed)); });
  return done.wait_for(5s) == std::future_status::ready;
}

boost::asio::ip::tcp::endpoint at(const std::string& address, std::uint16_t port) {
  return {boost::asio::ip::make_address(address), port};
}

}  // namespace

// A pod that comes back on another address: the client must be given the name to look up again.
TEST_CASE("C client hosts: a name goes as listed, a numeric host as its address, IPv6 without brackets", "[c_keeper]") {
  std::vector<c_client::KnownServer> servers{
      known("pzoo-0", "pzoo-0.pzoo", 2181, {"127.77.0.2"}), known("one", "127.0.0.1", 2182, {"127.0.0.1"}),
      known("six", "::1", 2183, {"::1"}), known("any", "", 2184, {"127.0.0.1", "::1"})};
  CHECK(c_client::connect_string(servers) == "pzoo-0.pzoo:2181,127.0.0.1:2182,::1:2183,127.0.0.1:2184,::1:2184");
}

TEST_CASE("C client peers: a listed name's new address is looked up again, by the peer's port, only when unknown",
          "[c_keeper]") {
  std::vector<c_client::KnownServer> servers{known("pzoo-0", "pzoo-0.pzoo", 2181, {"127.77.0.2"}),
                                             known("pzoo-1", "pzoo-1.pzoo", 2181, {"127.77.0.3"}),
                                             known("local", "127.0.0.1", 2182, {"127.0.0.1"})};
  std::vector<std::string> asked;
  auto look_up = [&asked](const std::string& host) {
    asked.push_back(host);
    return host == "pzoo-1.pzoo" ? Resolution{{boost::asio::ip::make_address("127.77.0.9")}, {}}
                                 : Resolution{{}, "lookup of " + host + " failed"};
  };
  CHECK(c_client::listed_name(servers, at("127.77.0.3", 2181), look_up) == "pzoo-1");
  CHECK(asked.empty());
  CHECK(c_client::listed_name(servers, at("127.77.0.9", 2181), look_up) == "pzoo-1");
  CHECK(asked == std::vector<std::string>{"pzoo-0.pzoo", "pzoo-1.pzoo"});
  asked.clear();
  CHECK(c_client::listed_name(servers, at("127.77.0.9", 2182), look_up) == "127.77.0.9:2182");
  CHECK(asked.empty());  // numeric hosts are never looked up, and no name has that port
  CHECK(c_client::listed_name(servers, at("127.77.0.8", 2181), look_up) == "127.77.0.8:2181");
}

// Seen in CI under load: the client's threads connected before zookeeper_init had returned on its
// worker, the round trip's writer was told "connected", and its first request found no handle
// (connection_loss on a healthy ensemble, a false critical).
TEST_CASE("C session: connected before zookeeper_init returned is not usable until the handle is there", "[c_keeper]") {
  using c_client::CSessionTestAccess;
  RefusingPort refusing;
  std::vector<SessionState> heard;  // touched on the strand only; read after an ask
  auto session = std::make_shared<c_client::CSession>(
      test_executor(), [&heard](const SessionEvent& event) { heard.push_back(event.state); }, KeeperOptions{},
      c_client::configure(std::nullopt));
  auto connected = ask_now(session, [](c_client::CSession& self) {
    CSessionTestAccess::opening(self);
    CSessionTestAccess::connected(self);
    return self.when_connected();
  });
  CHECK(ask_now(session, [&heard](c_client::CSession&) { return heard.size(); }) == 0);
  CHECK(connected.wait_for(0s) == std::future_status::timeout);

  hand_handle(session, refusing.port());
  REQUIRE(connected.wait_for(1s) == std::future_status::ready);
  CHECK(connected.get() == ZkError::ok);
  CHECK(ask_now(session, [&heard](c_client::CSession&) { return heard; }) ==
        std::vector<SessionState>{SessionState::connected});

  CHECK(closed_in_time(session));
}

// Seen in CI under ASan: a request made while zookeeper_init still ran on its worker failed with
// connection_loss at once, though the handle was a moment away.
TEST_CASE("C session: a request made before the handle exists is sent once it is there", "[c_keeper]") {
  using c_client::CSessionTestAccess;
  RefusingPort refusing;
  auto session = std::make_shared<c_client::CSession>(
      test_executor(), [](const SessionEvent&) {}, KeeperOptions{}, c_client::configure(std::nullopt));
  std::promise<ZkError> answered;
  auto answer = answered.get_future();
  ask_now(session, [&answered](c_client::CSession& self) {
    CSessionTestAccess::opening(self);
    auto request = std::make_shared<c_client::Request<StatResult>>(
        self.strand(), [&answered](StatResult result) { answered.set_value(result.error); });
    // A path the client itself refuses: its answer proves the request reached the handle.
    self.submit(request, [](zhandle_t* zh, const void* context) {
      return zoo_aexists(zh, "no-leading-slash", 0, &c_client::on_stat, context);
    });
    return true;
  });
  CHECK(answer.wait_for(100ms) == std::future_status::timeout);

  hand_handle(session, refusing.port());
  REQUIRE(answer.wait_for(5s) == std::future_status::ready);
  CHECK(answer.get() == ZkError::bad_arguments);

  CHECK(closed_in_time(session));
}

TEST_CASE("round trip through the C client: a server that refuses connections fails the write by the deadline",
          "[round_trip][c_keeper]") {
  RefusingPort refusing;
  RoundTripPlan plan;
  // IPv6 without brackets too: a host string the C client could not parse would be system_error.
  plan.servers = {{"v4", "127.0.0.1", refusing.port(), {}}, {"v6", "::1", refusing.port(), {}}};
  plan.namespace_path = "/zkverify";
  plan.payload = kKeeperPayload;
  plan.deadline = Clock::now() + 300ms;
  plan.session_timeout = 2000ms;
  SECTION("written through the IPv4 address") { plan.writer = 0; }
  SECTION("written through the IPv6 address") { plan.writer = 1; }
  auto trip = run_round_trip(plan, test_keepers());

  CHECK(Clock::now() < plan.deadline + kKeeperSlack);
  CHECK(trip.write_error == ZkError::deadline_exceeded);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
}

TEST_CASE("C keeper: without a server every request completes once, off the caller's thread, then with closing",
          "[c_keeper]") {
  RefusingPort refusing;
  auto keeper = test_keepers().open({{"refusing", "127.0.0.1", refusing.port(), {}}}, {});
  CHECK(keeper->wait_connected(Clock::now() + 100ms) == ZkError::deadline_exceeded);
  CHECK(keeper->state() == SessionState::connecting);
  CHECK(keeper->connected_server().empty());
  CHECK_FALSE(keeper->session_id());
  CHECK(keeper->negotiated_timeout() == 0ms);

  // Queued while connecting, failed when the connection attempt fails.
  CHECK(get_now(*keeper, "/", Clock::now() + 3s).error == ZkError::connection_loss);

  // Refused by the client at once: still answered on another thread.
  std::promise<std::pair<ZkError, std::thread::id>> refused;
  keeper->exists("no-leading-slash", [&](StatResult result) {
    refused.set_value({result.error, std::this_thread::get_id()});
  });
  auto [error, thread] = refused.get_future().get();
  CHECK(error == ZkError::bad_arguments);
  CHECK(thread != std::this_thread::get_id());

  Expect<DoneResult> pending;
  keeper->sync("/", pending.callback());
  CHECK(keeper->close(Clock::now() + kCloseBound));
  auto outcome = pending.await(Clock::now() + 1s).error;
  CHECK((outcome == ZkError::closing || outcome == ZkError::connection_loss));
  CHECK(keeper->state() == SessionState::closed);
  CHECK(keeper->wait_connected(Clock::now() + 1s) == ZkError::closing);
  CHECK(exists_now(*keeper, "/", Clock::now() + 1s).error == ZkError::closing);
  CHECK(keeper->close(Clock::now()));
}

// zookeeper_init's own shuffle is off for good (it is a process-wide switch), so the order is the
// keeper's: as listed with in_order, else shuffled per session. Peers that accept and never answer
// see each session's first attempt.
TEST_CASE("C keeper: in_order tries the listed order first, otherwise each session picks a random first server",
          "[c_keeper]") {
  constexpr int kSessions = 24;  // all on one server by chance: 2 in 2^24
  ::fake::Peer first({}, {::fake::Behaviour::stall, ""});
  ::fake::Peer second({}, {::fake::Behaviour::stall, ""});
  std::vector<ServerAddress> servers{{"first", "127.0.0.1", first.port(), {}},
                                     {"second", "127.0.0.1", second.port(), {}}};
  auto attempts_after_opening = [&](bool in_order) {
    KeeperOptions options;
    options.in_order = in_order;
    std::vector<std::unique_ptr<Keeper>> sessions;
    int before = first.connections() + second.connections();
    for (int i = 0; i < kSessions; ++i) sessions.push_back(test_keepers().open(servers, options, {}));
    auto deadline = Clock::now() + 3s;
    while (first.connections() + second.connections() < before + kSessions && Clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    close_all(sessions, Clock::now() + 2s);
  };
  attempts_after_opening(true);
  CHECK(first.connections() == kSessions);
  CHECK(second.connections() == 0);
  attempts_after_opening(false);
  CHECK(first.connections() + second.connections() == 2 * kSessions);
  CHECK(first.connections() > kSessions);  // some random first choices were the first server...
  CHECK(second.connections() > 0);         // ...and some the second
}
