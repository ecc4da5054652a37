// The actor primitive (probes/actor.hpp): state touched on its strand only, asks with deadlines,
// blocking calls offloaded and posted back, and a stop that completes when the last Task ends, so
// that an abandoned actor still owns what its handlers use.

#include <future>
#include <vector>

#include <catch2/catch.hpp>

#include "probes/actor.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;

namespace {

using std::chrono::milliseconds;

struct Counter : ActorCore {
  using ActorCore::ActorCore;
  std::vector<int> seen;                     // on the strand
  int stops = 0;                             // on the strand
  std::shared_ptr<std::promise<void>> gone;  // set by a test: the actor's end, observed
  ~Counter() override {
    if (gone) gone->set_value();
  }
  void on_stop() override { ++stops; }
};

// A gate the test opens: a worker's blocking call waits on it (with a deadline, so nothing hangs).
struct Gate {
  std::promise<void> opened;
  std::shared_future<void> open = opened.get_future().share();
  bool wait() const { return open.wait_for(std::chrono::seconds(10)) == std::future_status::ready; }
};

}  // namespace

TEST_CASE("actor: tells run on the strand, one at a time, in the order sent") {
  auto counter = std::make_shared<Counter>(test_executor());
  for (int i = 0; i < 200; ++i)
    tell(counter, [i](Counter& self) {
      CHECK(self.on_strand());
      self.seen.push_back(i);
    });
  auto seen = ask_now(counter, [](Counter& self) { return self.seen; });
  REQUIRE(seen.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i);
  CHECK(counter->stop_and_wait(Clock::now() + std::chrono::seconds(5)));
}

TEST_CASE("actor: ask answers from the strand, and at once when asked on the strand itself") {
  auto counter = std::make_shared<Counter>(test_executor());
  auto on_strand = ask_now(counter, [](Counter& self) { return self.on_strand(); });
  CHECK(on_strand);
  auto nested = ask_now(counter, [counter](Counter&) {
    // An ask on the strand must not wait for the strand (it would deadlock until its deadline).
    return ask(
               counter, [](Counter& self) { return self.seen.size(); }, Clock::now() + milliseconds(1))
        .has_value();
  });
  CHECK(nested);
  counter->stop_and_wait(Clock::now() + std::chrono::seconds(5));
}

TEST_CASE("actor: an ask whose answer misses the deadline says so, and the question still runs later") {
  auto counter = std::make_shared<Counter>(test_executor());
  Gate gate;
  tell(counter, [&gate](Counter&) { gate.wait(); });  // holds the strand until the gate opens
  auto missed = ask(
      counter, [](Counter& self) { return self.seen.size(); }, Clock::now() + milliseconds(50));
  CHECK_FALSE(missed.has_value());
  tell(counter, [](Counter& self) { self.seen.push_back(7); });
  gate.opened.set_value();
  CHECK(ask_now(counter, [](Counter& self) { return self.seen; }) == std::vector<int>{7});
  counter->stop_and_wait(Clock::now() + std::chrono::seconds(5));
}

TEST_CASE("actor: offload runs the blocking call on a worker, then its continuation on the strand") {
  auto counter = std::make_shared<Counter>(test_executor());
  auto answered = std::make_shared<std::promise<std::pair<bool, int>>>();
  offload(
      counter, [] { return 41; },
      [answered](Counter& self, int value) {
        answered->set_value({self.on_strand(), value + 1});
      });
  auto result = answered->get_future();
  REQUIRE(result.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  auto [on_strand, value] = result.get();
  CHECK(on_strand);
  CHECK(value == 42);
  counter->stop_and_wait(Clock::now() + std::chrono::seconds(5));
}

TEST_CASE("actor: stop completes once the last task ends, and an abandoned actor lives until then") {
  auto counter = std::make_shared<Counter>(test_executor());
  counter->gone = std::make_shared<std::promise<void>>();
  auto destroyed = counter->gone->get_future();
  Gate gate;
  auto continued = std::make_shared<std::promise<int>>();
  offload(
      counter, [&gate] { return gate.wait(); },
      [continued](Counter& self, bool opened) {
        self.seen.push_back(opened ? 1 : 0);  // the state is still there: the Task kept the actor
        continued->set_value(self.stops);
      });
  auto stopped = counter->stop();
  CHECK(stopped.wait_for(milliseconds(100)) == std::future_status::timeout);  // the offloaded call runs on
  counter.reset();                                                            // the caller abandons it
  CHECK(destroyed.wait_for(milliseconds(50)) == std::future_status::timeout);
  gate.opened.set_value();
  auto continuation = continued->get_future();
  REQUIRE(continuation.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(continuation.get() == 1);  // on_stop ran once, before the continuation
  CHECK(stopped.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  // The last Task has gone: nothing holds the actor any more.
  CHECK(destroyed.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
}

TEST_CASE("actor: stop is idempotent and on_stop runs once, and a stopped actor with no work is stopped at once") {
  auto counter = std::make_shared<Counter>(test_executor());
  CHECK(counter->stop_and_wait(Clock::now() + std::chrono::seconds(5)));
  CHECK(counter->stop_and_wait(Clock::now() + std::chrono::seconds(5)));
  CHECK(ask_now(counter, [](Counter& self) { return self.stops; }) == 1);
}
