#include "probes/c_session.hpp"

#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace zkverify::probes::c_client {

namespace asio = boost::asio;

// A when_connected continuation: resumed once, by the connection or by its timer (on the strand).
struct SessionCore::Waiter {
  explicit Waiter(const Strand& strand, std::function<void(bool)> continuation)
      : then(std::move(continuation)), timer(strand) {}
  std::function<void(bool)> then;
  asio::steady_timer timer;
  bool resumed = false;  // on the strand only
};

SessionCore::SessionCore(const asio::any_io_executor& executor, Keeper::Listener listener)
    : strand_(asio::make_strand(executor)), listener_(std::move(listener)) {}

void SessionCore::on_event(zhandle_t* zh, int type, int state, const char* /*path*/, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto& self = *static_cast<SessionCore*>(context);
  SessionEvent event{session_state_of(state), {}, {}};
  if (event.state == SessionState::connected) {
    event.server = self.connected_name(zh);
    event.granted_timeout = std::chrono::milliseconds(zoo_recv_timeout(zh));
  }
  self.publish(event);
}

// A refusal is final (the client closes the connection and its watcher reports
// ZOO_AUTH_FAILED_STATE as well). The connected event held back by publish() is announced now, so a
// listener waiting for the session to be usable (the round trip's) wakes when it is.
void SessionCore::on_auth(int rc, const void* context) {
  auto& self = *static_cast<SessionCore*>(const_cast<void*>(context));
  std::optional<SessionEvent> announce;
  {
    std::lock_guard lock(self.mutex_);
    self.auth_pending_ = false;
    auto held = std::exchange(self.held_, std::nullopt);
    if (rc != ZOK && self.state_ != SessionState::closed) announce = SessionEvent{SessionState::auth_failed, {}, {}};
    else if (held && self.state_ == SessionState::connected) announce = held;
    self.changed_.notify_all();
  }
  if (announce) self.publish(*announce);
}

void SessionCore::on_watch(zhandle_t* /*zh*/, int type, int state, const char* path, void* context) {
  auto kind = watch_kind_of(type, state);
  if (!kind) return;
  auto& slot = *static_cast<WatchSlot*>(context);
  if (!slot.delivered.test_and_set()) slot.fired(WatchNotice{*kind, path ? path : ""});
}

SessionState SessionCore::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

WatchSlot* SessionCore::keep_watch(std::function<void(WatchNotice)> fired) {
  std::lock_guard lock(mutex_);
  watches_.push_back(std::make_unique<WatchSlot>());
  watches_.back()->fired = std::move(fired);
  return watches_.back().get();
}

std::string SessionCore::hosts_of(const std::string& name) const {
  std::lock_guard lock(mutex_);
  std::vector<KnownServer> matching;
  for (const auto& server : servers_)
    if (server.name == name) matching.push_back(server);
  return connect_string(matching);
}

void SessionCore::set_servers(std::vector<KnownServer> servers) {
  std::lock_guard lock(mutex_);
  servers_ = std::move(servers);
}

std::string SessionCore::connected_name(zhandle_t* zh) const {
  std::lock_guard lock(mutex_);
  return name_of_peer(zh, servers_);
}

void SessionCore::mark_moving(bool moving) {
  std::lock_guard lock(mutex_);
  if (state_ != SessionState::closed) state_ = moving ? SessionState::connecting : SessionState::connected;
  changed_.notify_all();
}

void SessionCore::expect_auth() {
  std::lock_guard lock(mutex_);
  auth_pending_ = true;
}

void SessionCore::mark_open_failed() {
  std::lock_guard lock(mutex_);
  open_failed_ = true;
  changed_.notify_all();
}

void SessionCore::mark_closed(Clock::time_point deadline) {
  {
    std::unique_lock lock(mutex_);
    state_ = SessionState::closed;
    changed_.notify_all();
    if (!strand_.running_in_this_thread()) changed_.wait_until(lock, deadline, [&] { return !announcing_; });
  }
  resume_waiters(false);
}

ZkError SessionCore::wait_connected(Clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] {
    return (state_ != SessionState::connecting && !(state_ == SessionState::connected && auth_pending_)) ||
           open_failed_;
  });
  switch (state_) {
    case SessionState::connected: return auth_pending_ ? ZkError::deadline_exceeded : ZkError::ok;
    case SessionState::expired: return ZkError::session_expired;
    case SessionState::auth_failed: return ZkError::auth_failed;
    case SessionState::closed: return ZkError::closing;
    case SessionState::connecting: return open_failed_ ? ZkError::system_error : ZkError::deadline_exceeded;
  }
  return ZkError::deadline_exceeded;
}

bool SessionCore::wait_connected_to(const std::string& name, Clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(
      lock, deadline, [&] { return state_ == SessionState::connected && !auth_pending_ && connected_to_ == name; });
}

void SessionCore::when_connected(Clock::time_point deadline, std::function<void(bool)> then) {
  auto waiter = std::make_shared<Waiter>(strand_, std::move(then));
  {
    std::lock_guard lock(mutex_);
    bool usable = state_ == SessionState::connected && !auth_pending_;
    if (usable || state_ == SessionState::closed) {
      asio::post(strand_, [waiter, usable] { waiter->then(usable); });
      return;
    }
    waiters_.push_back(waiter);
  }
  waiter->timer.expires_at(deadline);
  waiter->timer.async_wait([waiter](const boost::system::error_code&) {
    if (std::exchange(waiter->resumed, true)) return;
    waiter->then(false);
  });
}

void SessionCore::resume_waiters(bool connected) {
  std::vector<std::shared_ptr<Waiter>> resumed;
  {
    std::lock_guard lock(mutex_);
    resumed = std::exchange(waiters_, {});
  }
  for (auto& waiter : resumed)
    asio::post(strand_, [waiter, connected] {
      if (std::exchange(waiter->resumed, true)) return;
      waiter->timer.cancel();
      waiter->then(connected);
    });
}

// Records the state at once (wait_connected sees it), then calls the listener on the strand, not on
// the client's thread and without the lock (it may call back into the Keeper).
void SessionCore::publish(const SessionEvent& event) {
  {
    std::lock_guard lock(mutex_);
    if (state_ == SessionState::closed) return;
    state_ = event.state;
    connected_to_ = event.state == SessionState::connected ? event.server : std::string();
    changed_.notify_all();
    if (event.state == SessionState::connected && auth_pending_) {  // announced by on_auth
      held_ = event;
      return;
    }
  }
  announce(event);
}

void SessionCore::announce(const SessionEvent& event) {
  asio::post(strand_, [self = shared_from_this(), event] {
    {
      std::lock_guard lock(self->mutex_);
      if (self->state_ == SessionState::closed) return;
      self->announcing_ = true;
    }
    if (self->listener_) self->listener_(event);
    {
      std::lock_guard lock(self->mutex_);
      self->announcing_ = false;
      self->changed_.notify_all();
    }
    if (event.state == SessionState::connected) self->resume_waiters(true);
  });
}

}  // namespace zkverify::probes::c_client
