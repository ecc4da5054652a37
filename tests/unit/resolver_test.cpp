// The bounded resolver: resolve_all's deadline on the executor, driven by a scripted resolver whose
// names are slow, missing or never answered, and what the probes and the C keeper make of a slow
// name. The system resolver meets only localhost (/etc/hosts): no DNS look-up of a real name.

#include <atomic>
#include <future>
#include <memory>
#include <mutex>

#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include "fake_peer.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "probes/resolver.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using ::fake::Behaviour;

namespace {

// How far past a deadline a call may return: wake-ups, not waiting.
constexpr auto kResolveSlack = 300ms;

boost::asio::ip::address loopback_address() { return boost::asio::ip::make_address("127.0.0.1"); }

// Names as a test wants them: "slow" is answered only by release() (or never), "missing" fails,
// "nap-*" take 300 ms (a timer on the executor), any other is 127.0.0.1 at once. Counts lookups.
class ScriptedResolver final : public Resolver {
 public:
  explicit ScriptedResolver(Executor& executor) : executor_(executor) {}
  void look_up(const std::string& name, std::function<void(Resolution)> done) override {
    ++started;
    if (name == "slow") {
      std::lock_guard lock(mutex_);
      held_.push_back(std::move(done));
    } else if (name == "missing") {
      done({{}, "lookup of missing failed: Name or service not known"});
    } else if (name.starts_with("nap-")) {
      auto timer = std::make_shared<boost::asio::steady_timer>(executor_.io(), 300ms);
      timer->async_wait([timer, done = std::move(done)](const boost::system::error_code&) {
        done({{loopback_address()}, {}});
      });
    } else {
      done({{loopback_address()}, {}});
    }
  }
  // Answers the slow lookups now, late.
  void release() {
    std::vector<std::function<void(Resolution)>> held;
    {
      std::lock_guard lock(mutex_);
      held.swap(held_);
    }
    for (auto& done : held) done({{loopback_address()}, {}});
  }
  std::atomic<int> started{0};

 private:
  Executor& executor_;
  std::mutex mutex_;
  std::vector<std::function<void(Resolution)>> held_;
};

std::vector<Resolution> resolve_now(Resolver& resolver, std::vector<std::string> hosts, Clock::time_point deadline) {
  std::promise<std::vector<Resolution>> promise;
  auto result = promise.get_future();
  resolve_all(test_executor().io().get_executor(), resolver, std::move(hosts), deadline,
              [&promise](std::vector<Resolution> found) { promise.set_value(std::move(found)); });
  REQUIRE(result.wait_until(deadline + 2s) == std::future_status::ready);
  return result.get();
}

std::chrono::milliseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

}  // namespace

TEST_CASE("resolver: a numeric host needs no lookup, even past the deadline", "[resolver]") {
  ScriptedResolver resolver(test_executor());
  auto found = resolve_now(resolver, {"127.0.0.1", "::1"}, Clock::now() - 1s);
  CHECK(found[0].addresses == std::vector{loopback_address()});
  CHECK(found[1].addresses == std::vector{boost::asio::ip::make_address("::1")});
  CHECK(resolver.started == 0);
}

TEST_CASE("resolver: a lookup still running at the deadline is reported and abandoned, its late answer ignored",
          "[resolver]") {
  ScriptedResolver resolver(test_executor());
  auto start = Clock::now();
  auto found = resolve_now(resolver, {"slow"}, start + 200ms);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() >= start + 200ms);
  CHECK(Clock::now() < start + 200ms + kResolveSlack);
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].ok());
  CHECK(found[0].error == "lookup of slow did not finish within the deadline");
  resolver.release();  // comes after the answer was given: nothing to deliver to, nothing breaks
}

TEST_CASE("resolver: a lookup that ends in time gives its addresses, or its error", "[resolver]") {
  ScriptedResolver resolver(test_executor());
  auto found = resolve_now(resolver, {"zoo-0.zoo", "missing"}, Clock::now() + 5s);
  CHECK(found[0].addresses == std::vector{loopback_address()});
  CHECK_FALSE(found[1].ok());
  CHECK(found[1].error == "lookup of missing failed: Name or service not known");
}

TEST_CASE("resolve_all: every lookup at once, one slow name costs only its own result", "[resolver]") {
  ScriptedResolver resolver(test_executor());
  auto start = Clock::now();
  auto deadline = start + 1s;
  auto found = resolve_now(resolver, {"nap-1", "slow", "nap-2", "127.0.0.1", "nap-3"}, deadline);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() < deadline + kResolveSlack);
  REQUIRE(found.size() == 5);
  for (std::size_t i : {0u, 2u, 3u, 4u}) CHECK(found[i].addresses == std::vector{loopback_address()});
  CHECK(found[1].error == "lookup of slow did not finish within the deadline");

  // Three naps of 300 ms end together, long before the deadline: they ran at once, not in a row.
  auto naps_started = Clock::now();
  auto naps = resolve_now(resolver, {"nap-4", "nap-5", "nap-6"}, naps_started + 5s);
  for (const auto& nap : naps) CHECK(nap.ok());
  CHECK(since(naps_started) < 700ms);
  resolver.release();
}

TEST_CASE("system resolver: localhost is looked up (in /etc/hosts, not DNS)", "[resolver]") {
  auto found = resolve_now(system_resolver(), {"localhost"}, Clock::now() + 5s);
  REQUIRE(found[0].ok());
  for (const auto& address : found[0].addresses) CHECK(address.is_loopback());
}

TEST_CASE("probe_servers with a name that never resolves: the other servers are fully probed, by the deadline",
          "[resolver]") {
  ::fake::Peer good({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}},
                     {"mntr", {Behaviour::answer, capture("mntr_leader.txt")}},
                     {"conf", {Behaviour::answer, capture("conf_follower.txt")}},
                     {"isro", {Behaviour::answer, "rw"}},
                     {"ruok", {Behaviour::answer, "imok"}}});
  ScriptedResolver resolver(test_executor());
  // Two names behind the slow one, as in a list where the slow server comes first.
  std::vector<ServerAddress> servers{{"slow", "slow", good.port(), {}},
                                     {"named", "zoo-0.zoo", good.port(), {}},
                                     {"numeric", "127.0.0.1", good.port(), {}}};
  ProbeLimits limits;
  auto start = Clock::now();
  limits.deadline = start + 800ms;
  limits.connect_timeout = limits.exchange_timeout = 800ms;

  auto probes = probe_servers(test_executor(), servers, limits, resolver);
  INFO("returned after " << since(start).count() << " ms");
  CHECK(Clock::now() < limits.deadline + kResolveSlack);
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
  resolver.release();
}

TEST_CASE("C keeper: open returns at once for a host name, and the session waits for its lookup",
          "[resolver][c_keeper]") {
  ::fake::Peer stalled({}, {Behaviour::stall, ""});
  ScriptedResolver resolver(test_executor());
  CKeeperFactory keepers(test_executor(), resolver);
  auto start = Clock::now();
  auto keeper = keepers.open({{"nowhere", "slow", 2181, {}}}, {});
  CHECK(since(start) < 100ms);
  // The name is never answered; the session never connects.
  CHECK(keeper->wait_connected(Clock::now() + 500ms) != ZkError::ok);
  CHECK(keeper->close(Clock::now() + 5s));  // returns: joining the client's threads, maybe starved

  // A name that resolved reaches the C client as the name, which it looks up itself (and again at
  // every attempt to reconnect: a server back on another address is found): it connects to the
  // peer. "localhost": a name the system resolves too, as the client does not use the seam.
  auto named = keepers.open({{"local", "localhost", stalled.port(), {}}}, {});
  CHECK(stalled.wait_for_connections(1, Clock::now() + 2s));
  CHECK(named->wait_connected(Clock::now() + 100ms) == ZkError::deadline_exceeded);  // the peer never answers
  CHECK(named->close(Clock::now() + 5s));
  resolver.release();
}
