#pragma once
// SIGINT and SIGTERM as events on the executor: once install()ed, an asio::signal_set records the
// first and the second signal and wakes every waiter; request() does the same without a signal
// (the tests, and a command that stops itself). No global: each Executor has one.

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "model/facts/clock.hpp"

namespace zkverify::probes {

class StopSignals {
 public:
  explicit StopSignals(boost::asio::io_context& io);
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // From now on SIGINT and SIGTERM stop the command instead of ending the process. Idempotent.
  void install();
  // As if `signal` had arrived.
  void request(int signal);

  // The nth stop's signal (1: the first, 2: the second), 0 before it.
  [[nodiscard]] int signal(int nth = 1) const;
  [[nodiscard]] bool requested(int nth = 1) const { return signal(nth) != 0; }
  // Until the nth stop or `deadline`, whichever is first; true when it came.
  bool wait_until(Clock::time_point deadline, int nth = 1) const;

  // Runs `callback(nth, signal)` at every stop from now on (on the thread that records it: it must
  // not block). Returns an id for forget().
  std::size_t on_stop(std::function<void(int nth, int signal)> callback);
  void forget(std::size_t id);
  // The callbacks not yet forgotten (a scope's subscription leaves none behind).
  [[nodiscard]] std::size_t subscribers() const;

 private:
  void arm();
  void record(int signal);

  boost::asio::signal_set signals_;
  bool installed_ = false;  // guarded by mutex_
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<int> received_;                                       // the signals in order
  std::map<std::size_t, std::function<void(int, int)>> callbacks_;  // by id
  std::size_t next_id_ = 0;
};

// on_stop for a scope: forgotten when it ends. Without signals (null) it does nothing. A callback
// already started when it ends may still run: it must own what it touches.
class StopSubscription {
 public:
  StopSubscription(StopSignals* signals, std::function<void(int nth, int signal)> callback);
  ~StopSubscription();
  StopSubscription(const StopSubscription&) = delete;
  StopSubscription& operator=(const StopSubscription&) = delete;

 private:
  StopSignals* signals_;
  std::size_t id_ = 0;
};

}  // namespace zkverify::probes
