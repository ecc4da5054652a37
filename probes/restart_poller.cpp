#include "probes/restart_poller.hpp"

#include <future>

#include <boost/asio/steady_timer.hpp>

#include "probes/actor.hpp"
#include "probes/four_letter.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
using std::chrono::milliseconds;

constexpr milliseconds kPollEvery{100};
constexpr milliseconds kPollLimit{300};  // a poll's deadline: a paused server costs at most this
// A pause waits for the poll in flight, which its own deadline ends; this bound is a backstop.
constexpr milliseconds kPollInFlightBound = 2 * kPollLimit + milliseconds(200);

// The poller's actor: its timeline, its timer and whether a poll is in flight, on its strand.
struct RestartPoller::State : ActorCore {
  State(Executor& on, std::vector<ServerAddress> listed, std::string restarted, std::optional<std::string> leader,
        std::shared_ptr<const TlsClient> client)
      : ActorCore(on),
        servers(std::move(listed)),
        target(std::move(restarted)),
        tls(std::move(client)),
        book(std::move(leader), Clock::now()),
        next(strand()) {}

  // A poll, unless one is in flight, a pause holds, or the poller stopped.
  void tick(const std::shared_ptr<State>& self) {
    if (stopping()) return;
    if (paused > 0) return schedule(self, Clock::now() + kPollEvery);
    polling = true;
    auto started = Clock::now();
    ProbeLimits limits;
    limits.deadline = started + kPollLimit;
    limits.connect_timeout = limits.exchange_timeout = kPollLimit;
    limits.srvr_only = true;
    limits.tls = tls;
    start_probe_servers(executor(), servers, limits, system_resolver(), nullptr,
                        [self, task = task(), started](const std::vector<ServerProbe>& probed) {
                          auto seen = poll_seen(probed, self->target, started);
                          tell(self, [seen, started](State& state) { state.polled(seen, started); });
                        });
  }

  void polled(const PollSeen& seen, Clock::time_point started) {
    book.polled(seen);
    polling = false;
    for (auto& idle : idle_waiters) idle.set_value();
    idle_waiters.clear();
    schedule(std::static_pointer_cast<State>(shared_from_this()), started + kPollEvery);
  }

  void schedule(const std::shared_ptr<State>& self, Clock::time_point at) {
    if (stopping()) return;
    next.expires_at(at);
    next.async_wait([self, task = task()](const boost::system::error_code& error) {
      if (!error) self->tick(self);
    });
  }

  // The future is ready once no poll is in flight.
  std::future<void> when_idle() {
    std::promise<void> idle;
    auto ready = idle.get_future();
    if (!polling) idle.set_value();
    else idle_waiters.push_back(std::move(idle));
    return ready;
  }

  void on_stop() override { next.cancel(); }

  const std::vector<ServerAddress> servers;
  const std::string target;
  const std::shared_ptr<const TlsClient> tls;  // the polls' TLS, none for plain TCP
  RestartTimeline book;
  bool polling = false;
  int paused = 0;
  std::vector<std::promise<void>> idle_waiters;  // pauses waiting for the poll in flight
  asio::steady_timer next;
};

RestartPoller::RestartPoller(Executor& executor, std::vector<ServerAddress> servers, std::string target,
                             std::optional<std::string> leader_before, std::shared_ptr<const TlsClient> tls)
    : state_(std::make_shared<State>(executor, std::move(servers), std::move(target), std::move(leader_before),
                                     std::move(tls))) {
  tell(state_, [self = state_](State& state) { state.tick(self); });
}

RestartPoller::~RestartPoller() { stop(); }

// The poll in flight ends by its own deadline; were it later, it would end on the state it owns.
void RestartPoller::stop() { state_->stop_and_wait(Clock::now() + kPollInFlightBound); }

RestartPoller::Pause::Pause(RestartPoller& poller) : poller_(poller) {
  auto idle = ask_now(poller_.state_, [](State& state) {
    ++state.paused;
    return std::make_shared<std::future<void>>(state.when_idle());
  });
  idle->wait_until(Clock::now() + kPollInFlightBound);  // past it, the poll's connection only adds one
}

RestartPoller::Pause::~Pause() {
  tell(poller_.state_, [](State& state) { --state.paused; });
}

StepTimeline RestartPoller::timeline() const {
  return ask_now(state_, [](State& state) { return state.book.timeline(Clock::now()); });
}

}  // namespace zkverify::probes
