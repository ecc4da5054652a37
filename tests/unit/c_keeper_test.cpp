// The C client behind the keeper seam, on its failure paths (its successful ones run in the
// integration tests against real servers).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "loopback_port.hpp"

#include "probes/c_keeper.hpp"
#include "probes/round_trip.hpp"

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
  auto trip = run_round_trip(plan, c_keeper_factory());

  CHECK(Clock::now() < plan.deadline + kSlack);
  CHECK(trip.write_error == ZkError::deadline_exceeded);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
}

TEST_CASE("C keeper: without a server every request completes once, off the caller's thread, then with closing",
          "[c_keeper]") {
  RefusingPort refusing;
  auto keeper = c_keeper_factory().open({{"refusing", "127.0.0.1", refusing.port(), {}}}, {});
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
