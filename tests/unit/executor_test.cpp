// The executor's blocking workers (probes/executor.hpp): a blocking call gets a worker of its own
// while there are workers to spare, and waits for a free one at the limit.

#include <array>
#include <chrono>
#include <csignal>
#include <future>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "probes/executor.hpp"

using namespace zkverify::probes;

namespace {

constexpr auto kPatience = std::chrono::seconds(10);

bool ready(const std::shared_future<void>& future) { return future.wait_for(kPatience) == std::future_status::ready; }

}  // namespace

TEST_CASE("executor: a worker is started when the calls waiting outnumber the idle workers") {
  // queued, idle, workers, limit
  CHECK(needs_another_worker(1, 0, 0, 4));
  CHECK_FALSE(needs_another_worker(1, 1, 1, 4));
  // One idle worker, notified but not yet awake, and a second call: it needs a worker of its own
  // (the hazard: counting only "is any worker idle" left it queued behind the first).
  CHECK(needs_another_worker(2, 1, 1, 4));
  CHECK_FALSE(needs_another_worker(2, 2, 2, 4));
  CHECK_FALSE(needs_another_worker(5, 0, 4, 4));
}

TEST_CASE("executor: blocking calls run at once while there are workers to spare, then wait for one") {
  // Declared before the executor, so that its calls, which it runs to the end, outlive none of them.
  std::promise<void> warmed;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::array<std::promise<void>, 4> started;
  Executor executor(ExecutorLimits{.io_threads = 1, .blocking_workers = 3});
  // A first call leaves one worker behind, idle: the next two calls arrive while it may still be
  // waking up.
  executor.run_blocking([&] { warmed.set_value(); });
  REQUIRE(ready(warmed.get_future().share()));

  for (auto& start : started) {
    executor.run_blocking([&start, released] {
      start.set_value();
      (void)released.wait_for(kPatience);
    });
  }
  for (std::size_t i = 0; i < 3; ++i) CHECK(ready(started[i].get_future().share()));
  auto counts = executor.worker_counts();
  CHECK(counts.workers == 3);
  CHECK(counts.idle == 0);
  CHECK(counts.queued == 1);  // the fourth: the limit is three
  auto fourth = started[3].get_future().share();
  CHECK(fourth.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);

  release.set_value();
  CHECK(ready(fourth));
  CHECK(executor.worker_counts().workers == 3);
}

TEST_CASE("stop signals: a callback runs at every stop until its subscription ends, and none piles up") {
  Executor executor(ExecutorLimits{.io_threads = 1, .blocking_workers = 1});
  auto& signals = executor.stop();
  // A long watch subscribes once per poll: a subscription that ended leaves nothing behind.
  for (int i = 0; i < 1000; ++i) StopSubscription scoped(&signals, [](int, int) {});
  CHECK(signals.subscribers() == 0);

  std::vector<std::pair<int, int>> seen;  // request() runs the callbacks on its own thread: this one
  StopSubscription kept(&signals, [&seen](int nth, int signal) { seen.emplace_back(nth, signal); });
  {
    StopSubscription ended(&signals, [&seen](int nth, int) { seen.emplace_back(nth, 0); });
    CHECK(signals.subscribers() == 2);
    signals.request(SIGTERM);
  }
  CHECK(signals.subscribers() == 1);
  signals.request(SIGINT);
  CHECK(seen == std::vector<std::pair<int, int>>{{1, SIGTERM}, {1, 0}, {2, SIGINT}});
  CHECK(signals.signal(2) == SIGINT);
}
