#pragma once
// The process's one executor, the Asio examples' way: one io_context whose small fixed pool of
// threads runs every timer, socket, signal and completion (the C client's are posted to it, each
// session's on a strand of its own, so they keep their order), and a fixed pool of workers for the
// few calls that block (zookeeper_init, zookeeper_close). The command's own thread drives it like a
// client: it starts work and waits for results, always with a deadline. Nothing here is global:
// main() owns one Executor, the tests one each. Whatever holds one of its strands or timers (a
// session, a watch engine, a probe in flight) must be gone before the Executor is.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "probes/stop_signals.hpp"

namespace zkverify::probes {

struct ExecutorLimits {
  std::size_t io_threads = 2;        // a slow writer of output on one still leaves one for timers
  std::size_t blocking_workers = 4;  // a close that blocks for seconds holds up only its own worker
};

// Whether run_blocking starts a worker: when the calls waiting outnumber the idle workers (a worker
// just notified has not taken its call yet, so one idle worker is not enough for two calls).
bool needs_another_worker(std::size_t queued, std::size_t idle, std::size_t workers, std::size_t max_workers);

class Executor {
 public:
  Executor();
  explicit Executor(ExecutorLimits limits);
  // Stops the io_context and joins its threads, then the workers once their calls returned (the C
  // client bounds those). main() does not wait for it: see verifier/main.cpp.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  boost::asio::io_context& io() { return io_; }
  // SIGINT and SIGTERM, once install()ed; a test requests a stop the same way.
  StopSignals& stop() { return stop_; }

  // Runs `call` on a blocking worker (the next free one), never on the caller's thread: the
  // caller may hold a lock the call takes. Calls run in the order given when a worker is free.
  void run_blocking(std::function<void()> call);

  struct WorkerCounts {
    std::size_t workers = 0;  // started so far (they live until the executor closes)
    std::size_t idle = 0;     // started, or starting, and not running a call
    std::size_t queued = 0;   // calls no worker has taken yet
  };
  WorkerCounts worker_counts();

 private:
  void work();

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> keep_running_;
  std::vector<std::thread> io_threads_;
  StopSignals stop_;

  std::mutex mutex_;  // guards what the workers share
  std::condition_variable queued_;
  std::deque<std::function<void()>> calls_;
  std::size_t idle_workers_ = 0;  // a worker counts as idle from its start until it takes a call
  bool closing_ = false;
  const std::size_t max_workers_;
  std::vector<std::thread> workers_;  // started on demand, up to max_workers_
};

}  // namespace zkverify::probes
