#pragma once
// One C-client session's state, as the client's threads reach it through the watcher's context:
// its state and events, the credentials' answer, its data watches, and the waits on them. Shared
// by the CKeeper and the work it hands to the executor, so it lives as long as the client may call
// the watcher (an abandoned close may still be running after the CKeeper is gone). Events and
// continuations run on the session's strand, in the order the client reported them.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include "model/facts/clock.hpp"
#include "probes/c_client.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes::c_client {

// One get_and_watch's watch, as the C client's watcher context: kept until the session is gone.
struct WatchSlot {
  std::function<void(WatchNotice)> fired;
  std::atomic_flag delivered;
};

class SessionCore : public std::enable_shared_from_this<SessionCore> {
 public:
  using Strand = boost::asio::strand<boost::asio::any_io_executor>;
  SessionCore(const boost::asio::any_io_executor& executor, Keeper::Listener listener);

  // Where the session's completions and events run, one at a time, in order.
  const Strand& strand() const { return strand_; }

  // The C client's watcher (its context is the SessionCore).
  static void on_event(zhandle_t* zh, int type, int state, const char* path, void* context);
  // zoo_add_auth's completion (once per handle; its context is the SessionCore).
  static void on_auth(int rc, const void* context);
  // The watcher of one get_and_watch (its context is the WatchSlot).
  static void on_watch(zhandle_t* zh, int type, int state, const char* path, void* context);

  [[nodiscard]] SessionState state() const;
  // A data watch's context: kept until the session is gone (the C client may call it until then).
  WatchSlot* keep_watch(std::function<void(WatchNotice)> fired);
  // "address:port,..." of the listed server `name`; empty when this session does not know it.
  [[nodiscard]] std::string hosts_of(const std::string& name) const;
  // Before zookeeper_init: the servers its handle is given.
  void set_servers(std::vector<KnownServer> servers);
  // The listed name of the server `zh` is connected to (name_of_peer).
  [[nodiscard]] std::string connected_name(zhandle_t* zh) const;

  // The session moves to a new handle (move_to): connecting until that one reports connected;
  // `moving` false puts it back (the new handle could not be made).
  void mark_moving(bool moving);
  // Credentials were handed to zoo_add_auth: the session counts as connected only once accepted.
  void expect_auth();
  // No host resolved, or zookeeper_init failed: the session will never connect.
  void mark_open_failed();
  // From now on the state stays `closed` and the listener is not called; a listener call in
  // progress is waited for until `deadline` (unless this is called from inside it).
  void mark_closed(Clock::time_point deadline);

  // Until the session connected (and its credentials were accepted), failed, or was closed, or the deadline.
  ZkError wait_connected(Clock::time_point deadline) const;
  // Until the session is connected to the listed server `name`, or the deadline.
  bool wait_connected_to(const std::string& name, Clock::time_point deadline) const;
  // Runs `then(true)` on the strand once the session is connected again, or `then(false)` at
  // `deadline` (or when it is closed first), exactly once.
  void when_connected(Clock::time_point deadline, std::function<void(bool)> then);

 private:
  void publish(const SessionEvent& event);
  void announce(const SessionEvent& event);
  void resume_waiters(bool connected);

  Strand strand_;
  const Keeper::Listener listener_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<KnownServer> servers_;  // empty until the hosts are resolved
  SessionState state_ = SessionState::connecting;
  std::string connected_to_;  // the listed server of the last connected event, while connected
  bool open_failed_ = false;
  bool auth_pending_ = false;         // zoo_add_auth's completion has not come yet
  std::optional<SessionEvent> held_;  // the connected event, until the credentials are accepted
  bool announcing_ = false;           // the listener runs (on the strand)
  std::vector<std::unique_ptr<WatchSlot>> watches_;
  struct Waiter;
  std::vector<std::shared_ptr<Waiter>> waiters_;  // when_connected's, until connected or their deadline
};

}  // namespace zkverify::probes::c_client
