#include "probes/stop_signals.hpp"

#include <csignal>

namespace zkverify::probes {

StopSignals::StopSignals(boost::asio::io_context& io) : signals_(io) {}

void StopSignals::install() {
  std::lock_guard lock(mutex_);
  if (installed_) return;
  installed_ = true;
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  arm();
}

// Each arrival re-arms the set: the second signal matters too (roll stops its step at the second).
void StopSignals::arm() {
  signals_.async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;  // the executor is going away
    record(signal);
    arm();
  });
}

void StopSignals::request(int signal) { record(signal); }

void StopSignals::record(int signal) {
  std::vector<std::function<void(int, int)>> callbacks;
  int nth = 0;
  {
    std::lock_guard lock(mutex_);
    received_.push_back(signal);
    nth = static_cast<int>(received_.size());
    for (const auto& [id, callback] : callbacks_) callbacks.push_back(callback);
  }
  changed_.notify_all();
  for (const auto& callback : callbacks) callback(nth, signal);
}

int StopSignals::signal(int nth) const {
  std::lock_guard lock(mutex_);
  return nth >= 1 && static_cast<std::size_t>(nth) <= received_.size() ? received_[nth - 1] : 0;
}

bool StopSignals::wait_until(Clock::time_point deadline, int nth) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&] { return received_.size() >= static_cast<std::size_t>(nth); });
}

std::size_t StopSignals::on_stop(std::function<void(int, int)> callback) {
  std::lock_guard lock(mutex_);
  callbacks_.emplace(next_id_, std::move(callback));
  return next_id_++;
}

void StopSignals::forget(std::size_t id) {
  std::lock_guard lock(mutex_);
  callbacks_.erase(id);
}

std::size_t StopSignals::subscribers() const {
  std::lock_guard lock(mutex_);
  return callbacks_.size();
}

StopSubscription::StopSubscription(StopSignals* signals, std::function<void(int, int)> callback) : signals_(signals) {
  if (signals_) id_ = signals_->on_stop(std::move(callback));
}

StopSubscription::~StopSubscription() {
  if (signals_) signals_->forget(id_);
}

}  // namespace zkverify::probes
