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
#include "probes/round_trip.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace std::chrono_literals;

namespace {

constexpr auto kPayload = "round trip payload";
// How far past a deadline a call may return: scheduling, not waiting.
constexpr auto kSlack = 1s;

// The C client behind the seam needs no server for its failure paths: a bound socket that does
// not listen refuses every connection.
using loopback::RefusingPort;

}  // namespace

TEST_CASE("round trip through the C client: a server that refuses connections fails the write by the deadline",
          "[round_trip][c_keeper]") {
  RefusingPort refusing;
  RoundTripPlan plan;
  // IPv6 without brackets too: a host string the C client could not parse would be system_error.
  plan.servers = {{"v4", "127.0.0.1", refusing.port(), {}}, {"v6", "::1", refusing.port(), {}}};
  plan.namespace_path = "/zkverify";
  plan.payload = kPayload;
  plan.deadline = Clock::now() + 300ms;
  plan.session_timeout = 2000ms;
  SECTION("written through the IPv4 address") { plan.writer = 0; }
  SECTION("written through the IPv6 address") { plan.writer = 1; }
  auto trip = run_round_trip(plan, test_keepers());

  CHECK(Clock::now() < plan.deadline + kSlack);
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
  CHECK(keeper->close(Clock::now() + 2s));
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
  fake::Peer first({}, {fake::Behaviour::stall, ""});
  fake::Peer second({}, {fake::Behaviour::stall, ""});
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
