// The bounded resolver: the real thread-per-name machinery, driven by stand-in lookups that are
// slow or never finish, and what the probes and the C keeper make of a slow name.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "fake_peer.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "probes/resolver.hpp"
#include "test_data.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using fake::Behaviour;

namespace {

// How far past a deadline a call may return: thread wake-ups, not waiting.
constexpr auto kSlack = 300ms;

boost::asio::ip::address loopback() { return boost::asio::ip::make_address("127.0.0.1"); }

// Holds back the lookups of one name until the test opens it (at the latest after a minute, so a
// test that fails early leaves no thread behind for long). Shared with the lookup threads, which
// may outlive the test case.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait_for(lock, 1min, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

// Stand-in lookups: "slow" waits for the gate, "missing" fails, "nap-*" take 300 ms, any other
// name is 127.0.0.1 at once. Counts the lookups made and those finished.
struct Lookups {
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  std::shared_ptr<std::atomic<int>> started = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> finished = std::make_shared<std::atomic<int>>(0);

  // Copies the shared state into the function: a lookup abandoned at its deadline outlives `this`.
  [[nodiscard]] LookupFunction function() const {
    return [gate = gate, started = started, finished = finished](const std::string& name) {
      ++*started;
      Resolution resolution{{loopback()}, {}};
      if (name == "slow") gate->wait();
      if (name.starts_with("nap-")) std::this_thread::sleep_for(300ms);
      if (name == "missing") resolution = {{}, "lookup of missing failed: Name or service not known"};
      ++*finished;
      return resolution;
    };
  }
};

// Opens the gate at the end of a test case, also a failed one, so no lookup waits for a minute.
struct OpensAtExit {
  std::shared_ptr<Gate> gate;
  ~OpensAtExit() { gate->open(); }
};

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

TEST_CASE("resolver: a numeric host needs no lookup, even past the deadline", "[resolver]") {
  Lookups lookups;
  ThreadedResolver resolver(lookups.function());
  auto passed = Clock::now() - 1s;
  CHECK(resolver.resolve("127.0.0.1", passed).addresses == std::vector{loopback()});
  CHECK(resolver.resolve("::1", passed).addresses == std::vector{boost::asio::ip::make_address("::1")});
  CHECK(*lookups.started == 0);
}

TEST_CASE("resolver: a lookup still running at the deadline is abandoned, reported, and not waited for",
          "[resolver]") {
  Lookups lookups;
  OpensAtExit opens{lookups.gate};
  ThreadedResolver resolver(lookups.function());
  auto start = Clock::now();
  auto resolution = resolver.resolve("slow", start + 200ms);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() >= start + 200ms);
  CHECK(Clock::now() < start + 200ms + kSlack);
  CHECK_FALSE(resolution.ok());
  CHECK(resolution.error == "lookup of slow did not finish within the deadline");

  // The abandoned thread finishes on its own once the lookup returns; nobody waits for it.
  lookups.gate->open();
  for (int i = 0; i < 100 && *lookups.finished == 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(*lookups.finished == 1);
}

TEST_CASE("resolver: a lookup that ends in time gives its addresses, or its error", "[resolver]") {
  Lookups lookups;
  ThreadedResolver resolver(lookups.function());
  CHECK(resolver.resolve("zoo-0.zoo", Clock::now() + 5s).addresses == std::vector{loopback()});
  auto missing = resolver.resolve("missing", Clock::now() + 5s);
  CHECK_FALSE(missing.ok());
  CHECK(missing.error == "lookup of missing failed: Name or service not known");
}

TEST_CASE("resolve_all: every lookup at once, one slow name costs only its own result", "[resolver]") {
  Lookups lookups;
  OpensAtExit opens{lookups.gate};
  ThreadedResolver resolver(lookups.function());
  auto start = Clock::now();
  auto deadline = start + 1s;
  auto found = resolve_all(resolver, {"nap-1", "slow", "nap-2", "127.0.0.1", "nap-3"}, deadline);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() < deadline + kSlack);
  REQUIRE(found.size() == 5);
  for (std::size_t i : {0u, 2u, 3u, 4u}) CHECK(found[i].addresses == std::vector{loopback()});
  CHECK(found[1].error == "lookup of slow did not finish within the deadline");

  // Three naps of 300 ms end together, long before the deadline: they ran at once, not in a row.
  auto naps_started = Clock::now();
  auto naps = resolve_all(resolver, {"nap-4", "nap-5", "nap-6"}, naps_started + 5s);
  for (const auto& nap : naps) CHECK(nap.ok());
  CHECK(since(naps_started) < 700ms);
}

TEST_CASE("system resolver: localhost is looked up, a name that does not exist fails by the deadline",
          "[resolver]") {
  auto local = system_resolver().resolve("localhost", Clock::now() + 5s);
  REQUIRE(local.ok());
  for (const auto& address : local.addresses) CHECK(address.is_loopback());

  // .invalid never exists (RFC 6761). Whether DNS says so at once or never answers, the answer
  // names the host and comes by the deadline.
  auto deadline = Clock::now() + 2s;
  auto missing = system_resolver().resolve("zkverify-test.invalid", deadline);
  CHECK(Clock::now() < deadline + kSlack);
  CHECK_FALSE(missing.ok());
  CHECK_THAT(missing.error, Contains("lookup of zkverify-test.invalid "));
}

TEST_CASE("probe_servers with a name that never resolves: the other servers are fully probed, by the deadline",
          "[resolver]") {
  fake::Peer good({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}},
                   {"mntr", {Behaviour::answer, capture("mntr_leader.txt")}},
                   {"conf", {Behaviour::answer, capture("conf_follower.txt")}},
                   {"isro", {Behaviour::answer, "rw"}},
                   {"ruok", {Behaviour::answer, "imok"}}});
  Lookups lookups;
  OpensAtExit opens{lookups.gate};
  ThreadedResolver resolver(lookups.function());
  // Two names behind the slow one, as in a list where the slow server comes first.
  std::vector<ServerAddress> servers{{"slow", "slow", good.port(), {}},
                                     {"named", "zoo-0.zoo", good.port(), {}},
                                     {"numeric", "127.0.0.1", good.port(), {}}};
  ProbeLimits limits;
  auto start = Clock::now();
  limits.deadline = start + 800ms;
  limits.connect_timeout = limits.exchange_timeout = 800ms;

  auto probes = probe_servers(servers, limits, resolver);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() < limits.deadline + kSlack);
  REQUIRE(probes.size() == 3);
  CHECK(probes[0].srvr_exchange.error == ProbeError::resolve_failed);
  CHECK(describe(probes[0].srvr_exchange) == "cannot resolve host: lookup of slow did not finish within the deadline");
  for (std::size_t i : {1u, 2u}) {
    INFO(servers[i].name);
    REQUIRE(probes[i].srvr);
    CHECK(probes[i].srvr->error == ProbeError::ok);
    CHECK(probes[i].mntr->facts.synced_followers == 4);
    CHECK(probes[i].conf->facts.server_id == 1);
    CHECK(probes[i].ruok->facts.imok);
  }
  CHECK(good.connections() == 10);  // five words each, none for the slow one
}

TEST_CASE("C keeper: open returns at once for a host name, and the session is looked up off its thread",
          "[resolver][c_keeper]") {
  fake::Peer stalled({}, {Behaviour::stall, ""});
  auto start = Clock::now();
  auto keeper = c_keeper_factory().open({{"nowhere", "zkverify-test.invalid", 2181, {}}}, {});
  CHECK(since(start) < 100ms);
  // The name fails (at once, or when its lookup is abandoned); the session never connects.
  CHECK(keeper->wait_connected(Clock::now() + 1s) != ZkError::ok);
  CHECK(keeper->close(Clock::now() + 1s));

  // A name that resolves reaches the C client as a numeric address: it connects to the peer.
  auto named = c_keeper_factory().open({{"local", "localhost", stalled.port(), {}}}, {});
  for (int i = 0; i < 100 && stalled.connections() == 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(stalled.connections() >= 1);
  CHECK(named->wait_connected(Clock::now() + 100ms) == ZkError::deadline_exceeded);  // the peer never answers
  CHECK(named->close(Clock::now() + 1s));
}
