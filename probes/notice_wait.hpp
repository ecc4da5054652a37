#pragma once
// A watch's notice and when it came, handed over once from the client's thread to the one waiting
// for it. A stop signal ends the wait at once, with nothing.

#include <atomic>
#include <future>
#include <memory>
#include <optional>

#include "model/facts/clock.hpp"
#include "model/facts/session.hpp"
#include "probes/stop_signals.hpp"

namespace zkverify::probes {

class NoticeWait : public std::enable_shared_from_this<NoticeWait> {
 public:
  struct Noticed {
    WatchNotice notice;
    Clock::time_point at;
  };
  // The first notice settles the wait; later ones are dropped (a watch's callback owns the wait).
  void notice(WatchNotice notice) { settle(Noticed{std::move(notice), Clock::now()}); }
  // The notice, if it came before `deadline` and before the `nth` stop of `signals` (none: no stop).
  std::optional<Noticed> wait(Clock::time_point deadline, StopSignals* signals, int nth = 1) {
    // The callback may run after this returns: it holds the wait.
    StopSubscription stopped(signals, [self = shared_from_this(), nth](int stop, int) {
      if (stop >= nth) self->settle(std::nullopt);
    });
    if (signals && signals->requested(nth)) settle(std::nullopt);  // before the subscription: it sees only later ones
    if (outcome_.wait_until(deadline) != std::future_status::ready) return std::nullopt;
    return outcome_.get();
  }

 private:
  void settle(std::optional<Noticed> outcome) {
    if (!settled_.test_and_set()) promise_.set_value(std::move(outcome));
  }
  std::atomic_flag settled_;
  std::promise<std::optional<Noticed>> promise_;
  std::shared_future<std::optional<Noticed>> outcome_ = promise_.get_future().share();
};

}  // namespace zkverify::probes
