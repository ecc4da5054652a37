#include "probes/actor.hpp"

namespace zkverify::probes {

Task::Task(std::shared_ptr<ActorCore> core) : core_(std::move(core)) {
  if (core_) core_->tasks_.fetch_add(1, std::memory_order_relaxed);
}

Task::Task(const Task& other) : core_(other.core_) {
  if (core_) core_->tasks_.fetch_add(1, std::memory_order_relaxed);
}

Task& Task::operator=(Task other) noexcept {
  release();
  core_ = std::move(other.core_);
  return *this;
}

Task::~Task() { release(); }

void Task::release() noexcept {
  if (!core_) return;
  if (core_->tasks_.fetch_sub(1, std::memory_order_acq_rel) == 1) core_->task_ended();
  core_.reset();
}

ActorCore::ActorCore(Executor& executor)
    : executor_(executor), strand_(boost::asio::make_strand(executor.io().get_executor())) {}

// The stop is itself a Task: with no other work in progress, its end is the actor's stop.
std::shared_future<void> ActorCore::stop() {
  boost::asio::post(strand_, [self = shared_from_this(), task = task()] {
    if (self->stopping_.exchange(true, std::memory_order_acq_rel)) return;
    self->on_stop();
  });
  return stopped_future_;
}

bool ActorCore::stop_and_wait(Clock::time_point deadline) {
  return stop().wait_until(deadline) == std::future_status::ready;
}

// The count reached zero: once stopping, the actor is stopped for good (a Task made later, by a
// tell() after the stop, changes nothing).
void ActorCore::task_ended() noexcept {
  if (!stopping_.load(std::memory_order_acquire)) return;
  if (stopped_.exchange(true, std::memory_order_acq_rel)) return;
  stopped_promise_.set_value();
}

}  // namespace zkverify::probes
