#include "fake_dispatcher.hpp"

#include <algorithm>

namespace zkverify::fake {

namespace {

// With reordering on, how long the dispatcher gathers completions before running them together.
constexpr auto kGatherWindow = std::chrono::milliseconds(20);

}  // namespace

Dispatcher::Dispatcher() : thread_([this] { run(); }) {}

Dispatcher::~Dispatcher() { stop(); }

void Dispatcher::post(Task task, Clock::duration after) {
  std::lock_guard lock(mutex_);
  if (stopping_) {
    kept_.push_back(std::make_shared<Task>(std::move(task)));
    return;
  }
  queue_.emplace(Clock::now() + after, std::move(task));
  changed_.notify_all();
}

void Dispatcher::keep(std::shared_ptr<void> never) {
  std::lock_guard lock(mutex_);
  kept_.push_back(std::move(never));
}

void Dispatcher::set_reorder(bool reorder) {
  std::lock_guard lock(mutex_);
  reorder_ = reorder;
}

void Dispatcher::set_delay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mutex_);
  delay_ = delay;
}

std::chrono::milliseconds Dispatcher::delay() const {
  std::lock_guard lock(mutex_);
  return delay_;
}

// Runs due tasks in batches, each task without the lock.
void Dispatcher::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (queue_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto ready = queue_.begin()->first + (reorder_ ? kGatherWindow : Clock::duration::zero());
    if (Clock::now() < ready) {
      changed_.wait_until(lock, ready);
      continue;
    }
    auto batch = take_due_tasks();
    lock.unlock();
    for (auto& task : batch) task.run();
    batch.clear();  // destroys the callbacks without the lock too
    lock.lock();
  }
}

// The tasks due now, in order; with reordering (which gathered them for kGatherWindow), the
// completions newest first, after the events, which keep their order.
std::vector<Dispatcher::Task> Dispatcher::take_due_tasks() {
  std::vector<Task> batch;
  auto now = Clock::now();
  while (!queue_.empty() && queue_.begin()->first <= now) {
    batch.push_back(std::move(queue_.begin()->second));
    queue_.erase(queue_.begin());
  }
  if (reorder_) {
    auto is_event = [](const Task& task) { return !task.completion; };
    auto completions = std::stable_partition(batch.begin(), batch.end(), is_event);
    std::reverse(completions, batch.end());
  }
  return batch;
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable() && !on_its_thread()) thread_.join();
  std::multimap<Clock::time_point, Task> pending;
  std::vector<std::shared_ptr<void>> kept;
  {
    std::lock_guard lock(mutex_);
    pending.swap(queue_);
    kept.swap(kept_);
  }
}

}  // namespace zkverify::fake
