#include "probes/executor.hpp"

#include <utility>

namespace zkverify::probes {

Executor::Executor() : Executor(ExecutorLimits{}) {}

Executor::Executor(ExecutorLimits limits)
    : io_(static_cast<int>(limits.io_threads)),
      keep_running_(io_.get_executor()),
      stop_(io_),
      max_workers_(limits.blocking_workers) {
  for (std::size_t i = 0; i < limits.io_threads; ++i) io_threads_.emplace_back([this] { io_.run(); });
}

// The workers first: a close they still run posts its last completions to the io_context, which
// is still running. Then the io_context, whose pending handlers are destroyed with it.
Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  queued_.notify_all();
  for (auto& worker : workers_) worker.join();
  keep_running_.reset();
  io_.stop();
  for (auto& thread : io_threads_) thread.join();
}

bool needs_another_worker(std::size_t queued, std::size_t idle, std::size_t workers, std::size_t max_workers) {
  return queued > idle && workers < max_workers;
}

void Executor::run_blocking(std::function<void()> call) {
  std::lock_guard lock(mutex_);
  calls_.push_back(std::move(call));
  if (needs_another_worker(calls_.size(), idle_workers_, workers_.size(), max_workers_)) {
    ++idle_workers_;
    workers_.emplace_back([this] { work(); });
  } else {
    queued_.notify_one();
  }
}

Executor::WorkerCounts Executor::worker_counts() {
  std::lock_guard lock(mutex_);
  return {workers_.size(), idle_workers_, calls_.size()};
}

// Takes the next call until the executor closes; every call queued by then still runs (a
// zookeeper_close left undone would leave the C client's threads calling into the dead executor).
void Executor::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [this] { return closing_ || !calls_.empty(); });
    if (calls_.empty()) return;
    --idle_workers_;
    auto call = std::move(calls_.front());
    calls_.pop_front();
    lock.unlock();
    call();
    lock.lock();
    ++idle_workers_;
  }
}

}  // namespace zkverify::probes
