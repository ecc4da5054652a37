#include "probes/restart_poller.hpp"

#include <condition_variable>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "probes/four_letter.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
using std::chrono::milliseconds;

constexpr milliseconds kPollEvery{100};
constexpr milliseconds kPollLimit{300};  // a poll's deadline: a paused server costs at most this

struct RestartPoller::State : std::enable_shared_from_this<RestartPoller::State> {
  State(Executor& on, std::vector<ServerAddress> listed, std::string restarted, std::optional<std::string> leader)
      : executor(on),
        servers(std::move(listed)),
        target(std::move(restarted)),
        book(std::move(leader), Clock::now()),
        strand(asio::make_strand(on.io().get_executor())),
        next(strand) {}

  std::shared_ptr<const TlsClient> tls;  // the polls' TLS, none for plain TCP

  // On the strand: a poll, unless one is in flight, a pause holds, or the poller stopped.
  void tick() {
    {
      std::lock_guard lock(mutex);
      if (stopped) return;
      if (paused > 0) return schedule(Clock::now() + kPollEvery);
      polling = true;
    }
    auto started = Clock::now();
    ProbeLimits limits;
    limits.deadline = started + kPollLimit;
    limits.connect_timeout = limits.exchange_timeout = kPollLimit;
    limits.srvr_only = true;
    limits.tls = tls;
    start_probe_servers(executor, servers, limits, system_resolver(), nullptr,
                        [self = shared_from_this(), started](const std::vector<ServerProbe>& probed) {
                          {
                            std::lock_guard lock(self->mutex);
                            self->book.polled(poll_seen(probed, self->target, started));
                            self->polling = false;
                          }
                          self->ended.notify_all();
                          asio::post(self->strand, [self, started] { self->schedule(started + kPollEvery); });
                        });
  }
  void schedule(Clock::time_point at) {
    next.expires_at(at);
    next.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (!error) self->tick();
    });
  }
  // With the lock held: until no poll is in flight (each ends by its own deadline).
  void wait_for_poll(std::unique_lock<std::mutex>& lock) {
    ended.wait_until(lock, Clock::now() + 2 * kPollLimit + milliseconds(200), [this] { return !polling; });
  }

  Executor& executor;
  const std::vector<ServerAddress> servers;
  const std::string target;
  std::mutex mutex;  // guards the book and the flags
  std::condition_variable ended;
  RestartTimeline book;
  bool polling = false, stopped = false;
  int paused = 0;
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer next;  // on the strand
};

RestartPoller::RestartPoller(Executor& executor, std::vector<ServerAddress> servers, std::string target,
                             std::optional<std::string> leader_before, std::shared_ptr<const TlsClient> tls)
    : state_(std::make_shared<State>(executor, std::move(servers), std::move(target), std::move(leader_before))) {
  state_->tls = std::move(tls);
  asio::post(state_->strand, [state = state_] { state->tick(); });
}

RestartPoller::~RestartPoller() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the poll in flight ends by its own deadline
  }
}

void RestartPoller::stop() {
  {
    std::unique_lock lock(state_->mutex);
    if (state_->stopped) return;
    state_->stopped = true;
    state_->wait_for_poll(lock);
  }
  asio::post(state_->strand, [state = state_] { state->next.cancel(); });
}

RestartPoller::Pause::Pause(RestartPoller& poller) : poller_(poller) {
  std::unique_lock lock(poller_.state_->mutex);
  ++poller_.state_->paused;
  poller_.state_->wait_for_poll(lock);
}

RestartPoller::Pause::~Pause() {
  std::lock_guard lock(poller_.state_->mutex);
  --poller_.state_->paused;
}

StepTimeline RestartPoller::timeline() const {
  std::lock_guard lock(state_->mutex);
  return state_->book.timeline(Clock::now());
}

}  // namespace zkverify::probes
