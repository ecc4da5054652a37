#pragma once
// One C-client session as an actor (probes/actor.hpp). On its strand: the handle, the session's
// state and events, the credentials' answer, its data watches and whoever waits on them. The C
// client's threads only post to it (its watcher, the credentials' completion) or to a request's
// callback; the calls that block (zookeeper_init, zookeeper_close) are offloaded to the executor's
// workers, and each holds a Task, so the session outlives every handle the client may still call
// back through (an abandoned close included).

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/ip/tcp.hpp>

#include "probes/actor.hpp"
#include "probes/c_client.hpp"
#include "probes/c_requests.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes::c_client {

// One get_and_watch's watch, as the C client's watcher context: kept until the session is gone.
struct WatchSlot {
  std::function<void(WatchNotice)> fired;  // posts to the session's strand
  std::atomic_flag delivered;
};

class CSession : public ActorCore {
 public:
  // `init_flags`: zookeeper_init's, from c_client::configure.
  CSession(Executor& executor, Keeper::Listener listener, KeeperOptions options, int init_flags);

  // The C client's watcher (its context is the CSession).
  static void on_event(zhandle_t* zh, int type, int state, const char* path, void* context);
  // zoo_add_auth's completion (once per handle; its context is the CSession).
  static void on_auth(int rc, const void* context);
  // The watcher of one get_and_watch (its context is the WatchSlot).
  static void on_watch(zhandle_t* zh, int type, int state, const char* path, void* context);

  // Everything below runs on the strand.

  // The hosts were looked up: zookeeper_init on a worker (nothing once a close has begun).
  void open(const std::vector<ServerAddress>& servers, std::vector<Resolution> found);
  // Hands a request to the client through `call(handle, context)`: without a handle the session is
  // not connected (connection_loss, as the client answers what it cannot send); once closing, ZCLOSING.
  // ZMARSHALLINGERROR is ambiguous: the client returns it when it queued nothing (an invalid path
  // in a multi) and when it queued the completion but not the request (out of memory); the context
  // then stays with the client (a few bytes leak, for a caller's bug).
  template <class Req, class Call>
  void submit(const std::shared_ptr<Req>& request, Call call);
  // A data watch's context, kept until the session is gone (the C client may call it until then).
  WatchSlot* keep_watch(std::function<void(WatchNotice)> fired);

  [[nodiscard]] SessionState state() const { return state_; }
  // From any thread: the state as the strand last set it. Keeper::state() is asked from executor
  // threads too (the sidecar's lender, in a probe's report callback), where an ask is refused.
  [[nodiscard]] SessionState published_state() const { return published_state_.load(std::memory_order_acquire); }
  [[nodiscard]] std::optional<std::int64_t> session_id() const;
  [[nodiscard]] std::string connected_server() const;
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const;
  // Ready with the outcome once the session is usable (connected, credentials accepted), failed or
  // closed: ok, session_expired, auth_failed, closing, system_error (it never opened).
  std::shared_future<ZkError> when_connected();
  // Ready (true) once the session is connected to the listed server `name` (false once closed).
  std::shared_future<bool> when_connected_to(const std::string& name);
  // Keeper::move_to: a second handle resumes the session on `name` (c_session.cpp says why).
  ZkError move_to(const std::string& name);
  void widen(const std::vector<std::string>& crowded);
  // Keeper::return_home: the handle's list becomes the session's own server alone.
  bool return_home();
  [[nodiscard]] bool can_return_home() const;
  // Starts the close (the first call), and sets `done` once zookeeper_close has returned for
  // every handle.
  void close(std::promise<void> done);

 private:
  friend struct CSessionTestAccess;  // drives the strand's steps in an order a test chooses
  struct Event {                     // a watcher's event, read on the client's thread while the handle was valid
    zhandle_t* handle = nullptr;
    SessionState state = SessionState::connecting;
    std::optional<boost::asio::ip::tcp::endpoint> peer;
    std::string server;  // the listed server at `peer` (its name looked up again if need be)
    std::chrono::milliseconds granted{0};
  };
  std::shared_ptr<CSession> self();
  void opened(zhandle_t* handle);
  void event(const Event& event);
  void authenticated(int rc);
  void publish(const SessionEvent& event);
  void resolve_waiters();
  void close_handles(std::vector<zhandle_t*> handles);
  [[nodiscard]] std::string name_of(const std::optional<boost::asio::ip::tcp::endpoint>& peer) const;
  void release_held();
  // Connected, with the handle that opened() keeps, and the credentials accepted.
  [[nodiscard]] bool usable() const { return state_ == SessionState::connected && handle_ && !auth_pending_; }

  const Keeper::Listener listener_;
  const KeeperOptions options_;
  const int init_flags_;
  // Empty until the hosts are resolved; set by open() before any handle exists and never changed
  // after: the client's threads read it too (on_event).
  std::vector<KnownServer> servers_;
  std::string home_;                 // the first listed server's name (set with servers_)
  zhandle_t* handle_ = nullptr;      // null until opened, and once the close took it
  std::vector<zhandle_t*> retired_;  // handles the session moved away from, closed after it
  bool narrow_ = false;              // the handle has KeeperOptions::first_choices of the servers only
  bool opening_ = false;             // zookeeper_init runs on a worker
  bool open_failed_ = false;
  // Requests made before the handle existed, submitted by opened() (or failed by a failed open or the close).
  std::vector<std::function<void()>> waiting_;
  void submit_waiting() {
    for (auto& send : std::exchange(waiting_, {})) send();
  }
  void set_state(SessionState state) {
    state_ = state;
    published_state_.store(state, std::memory_order_release);
  }
  SessionState state_ = SessionState::connecting;
  std::atomic<SessionState> published_state_{SessionState::connecting};
  std::string connected_to_;  // the listed server of the last connected event, while connected
  bool auth_pending_ = false;
  std::optional<SessionEvent> held_;  // the connected event, until usable() (handle, credentials)
  std::vector<std::unique_ptr<WatchSlot>> watches_;
  std::vector<std::promise<ZkError>> connected_waiters_;
  std::vector<std::pair<std::string, std::promise<bool>>> connected_to_waiters_;
  bool closing_ = false;     // a close began: requests answer ZCLOSING
  bool close_done_ = false;  // every handle's zookeeper_close returned
  std::vector<std::promise<void>> close_waiters_;
};

// Implementation of the template above.
template <class Req, class Call>
void CSession::submit(const std::shared_ptr<Req>& request, Call call) {
  if (!handle_ && !closing_ && !open_failed_) {  // resolving or opening: sent once opened() has the handle
    waiting_.emplace_back([this, request, call]() mutable { submit(request, std::move(call)); });
    return;
  }
  int rc = ZOK;
  if (closing_) {
    rc = ZCLOSING;
  } else if (!handle_) {
    rc = ZCONNECTIONLOSS;
  } else {
    const void* context = hand_to_client(request);
    rc = call(handle_, context);
    if (rc != ZOK && rc != ZMARSHALLINGERROR) take_back<Req>(context);
  }
  if (rc != ZOK) request->deliver(with_error<typename Req::Result>(rc));
}

}  // namespace zkverify::probes::c_client
