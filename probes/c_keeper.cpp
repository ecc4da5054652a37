#include "probes/c_keeper.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <zookeeper/zookeeper.h>

#include "probes/resolver.hpp"

namespace zkverify::probes {

namespace {

// The C client's process-wide settings, set once before the first handle; returns zookeeper_init's
// flags. Its log goes nowhere unless ZKVERIFY_ZK_LOG names a file (zkverify reports errors itself),
// and without the log no "client environment" lines (a passwd lookup per handle) either. Its
// shuffle of the hosts is off for good: the switch is a global that zookeeper_init and
// zoo_set_servers read, and setting it per open would make handles open one at a time (each
// zookeeper_init takes a millisecond or more). Sessions that want a random order get it from
// open_handle.
int configure_client() {
  static const int init_flags = [] {
    const char* target = std::getenv("ZKVERIFY_ZK_LOG");
    // Intentionally never closed: the C client may log until the process exits.
    FILE* stream = std::fopen(target ? target : "/dev/null", "a");
    if (stream) zoo_set_log_stream(stream);
    zoo_set_debug_level(target ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_ERROR);
    zoo_deterministic_conn_order(1);
    return target ? 0 : ZOO_NO_LOG_CLIENTENV;
  }();
  return init_flags;
}

// A listed server with the addresses its host resolved to: zookeeper_init is given these, so the
// peer address of the session's socket maps back to the server's name.
struct KnownServer {
  std::string name;
  std::uint16_t port = 0;
  std::vector<boost::asio::ip::address> addresses;
};

// The listed servers whose hosts resolved by the deadline, all looked up at once through the
// bounded resolver. The others are left out: a session fails over to the rest, if any.
std::vector<KnownServer> resolve_servers(const std::vector<ServerAddress>& servers, Clock::time_point deadline) {
  std::vector<std::string> hosts;
  for (const auto& server : servers) hosts.push_back(server.host);
  auto found = resolve_all(system_resolver(), hosts, deadline);
  std::vector<KnownServer> known;
  for (std::size_t i = 0; i < servers.size(); ++i)
    if (found[i].ok()) known.push_back({servers[i].name, servers[i].port, std::move(found[i].addresses)});
  return known;
}

// "address:port,..." for zookeeper_init: numeric, so that it looks nothing up. IPv6 addresses go
// without brackets: the 3.8 client splits each entry at its last colon and does not understand
// "[::1]:2181".
std::string connect_string(const std::vector<KnownServer>& servers) {
  std::string hosts;
  for (const auto& server : servers) {
    for (const auto& address : server.addresses) {
      if (!hosts.empty()) hosts += ',';
      hosts += address.to_string() + ':' + std::to_string(server.port);
    }
  }
  return hosts;
}

// The listed name of the server `zh` is connected to: "" while not connected, "address:port" when
// the peer is none of the listed servers.
std::string name_of_peer(zhandle_t* zh, const std::vector<KnownServer>& servers) {
  boost::asio::ip::tcp::endpoint peer;
  auto length = static_cast<socklen_t>(peer.capacity());
  if (!zookeeper_get_connected_host(zh, peer.data(), &length)) return {};
  peer.resize(length);
  for (const auto& server : servers)
    if (peer.port() == server.port && std::ranges::find(server.addresses, peer.address()) != server.addresses.end())
      return server.name;
  return peer.address().to_string() + ':' + std::to_string(peer.port());
}

SessionState session_state_of(int state) {
  if (state == ZOO_CONNECTED_STATE) return SessionState::connected;
  if (state == ZOO_EXPIRED_SESSION_STATE) return SessionState::expired;
  if (state == ZOO_AUTH_FAILED_STATE) return SessionState::auth_failed;
  return SessionState::connecting;  // connecting, associating, not yet connected
}

// One get_and_watch's watch, as the C client's watcher context: owned by the session's SessionShared,
// so it lives as long as the client may call its watcher.
struct WatchSlot {
  std::function<void(WatchNotice)> fired;
  std::atomic_flag delivered;
};

std::optional<WatchKind> watch_kind_of(int type, int state) {
  if (type == ZOO_CHANGED_EVENT) return WatchKind::changed;
  if (type == ZOO_DELETED_EVENT) return WatchKind::deleted;
  if (type == ZOO_CREATED_EVENT) return WatchKind::created;
  if (type == ZOO_CHILD_EVENT) return WatchKind::children;
  // A disconnection keeps the watch (the client sets it again on reconnecting); expiry ends it.
  if (type == ZOO_SESSION_EVENT && state == ZOO_EXPIRED_SESSION_STATE) return WatchKind::session_lost;
  return std::nullopt;
}

// The watcher of a handle the session moved away from: its events are no longer the session's.
void ignore_event(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/, void* /*context*/) {}

// What the C client's threads reach through the watcher's context. Owned jointly by the CKeeper
// and its opening and closing threads, so it lives as long as the client may call the watcher,
// which it can do while the CKeeper is being destroyed or after (an abandoned close is still
// running).
class SessionShared {
 public:
  explicit SessionShared(Keeper::Listener listener) : listener_(std::move(listener)) {}

  // The C client's watcher; the session's events arrive on its completion thread, one at a time.
  static void on_event(zhandle_t* zh, int type, int state, const char* /*path*/, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto& self = *static_cast<SessionShared*>(context);
    SessionEvent event{session_state_of(state), {}, {}};
    if (event.state == SessionState::connected) {
      event.server = self.connected_name(zh);
      event.granted_timeout = std::chrono::milliseconds(zoo_recv_timeout(zh));
    }
    self.publish(event);
  }

  [[nodiscard]] SessionState state() const {
    std::lock_guard lock(mutex_);
    return state_;
  }

  // A data watch's context: kept until the session is gone (the C client may call it until then).
  WatchSlot* keep_watch(std::function<void(WatchNotice)> fired) {
    std::lock_guard lock(mutex_);
    watches_.push_back(std::make_unique<WatchSlot>());
    watches_.back()->fired = std::move(fired);
    return watches_.back().get();
  }
  // The C client's watcher of one get_and_watch: delivers the first node event (or expiry) once.
  static void on_watch(zhandle_t* /*zh*/, int type, int state, const char* path, void* context) {
    auto kind = watch_kind_of(type, state);
    if (!kind) return;
    auto& slot = *static_cast<WatchSlot*>(context);
    if (!slot.delivered.test_and_set()) slot.fired(WatchNotice{*kind, path ? path : ""});
  }

  // "address:port,..." of the listed server `name`; empty when this session does not know it.
  [[nodiscard]] std::string hosts_of(const std::string& name) const {
    std::lock_guard lock(mutex_);
    std::vector<KnownServer> matching;
    for (const auto& server : servers_)
      if (server.name == name) matching.push_back(server);
    return connect_string(matching);
  }

  // Before zookeeper_init: the servers its handle is given.
  void set_servers(std::vector<KnownServer> servers) {
    std::lock_guard lock(mutex_);
    servers_ = std::move(servers);
  }
  // The listed name of the server `zh` is connected to (see name_of_peer).
  [[nodiscard]] std::string connected_name(zhandle_t* zh) const {
    std::lock_guard lock(mutex_);
    return name_of_peer(zh, servers_);
  }

  // The session is moving to a new handle (move_to): connecting until that one reports connected;
  // `moving` false puts it back (the new handle could not be made).
  void mark_moving(bool moving) {
    std::lock_guard lock(mutex_);
    if (state_ != SessionState::closed) state_ = moving ? SessionState::connecting : SessionState::connected;
    changed_.notify_all();
  }

  // Credentials were handed to zoo_add_auth: wait_connected waits for its completion too.
  void expect_auth() {
    std::lock_guard lock(mutex_);
    auth_pending_ = true;
  }
  // zoo_add_auth's completion (once per handle): a refusal is final (the C client closes the
  // connection and its watcher reports ZOO_AUTH_FAILED_STATE as well).
  // The connected event held back by publish() is announced now, so that a listener waiting for the
  // session to be usable (the round trip's) wakes when it is.
  static void on_auth(int rc, const void* context) {
    auto& self = *static_cast<SessionShared*>(const_cast<void*>(context));
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

  // No host resolved, or zookeeper_init failed: the session will never connect.
  void mark_open_failed() {
    std::lock_guard lock(mutex_);
    open_failed_ = true;
    changed_.notify_all();
  }

  // Until the session connected, failed, or was closed, or the deadline passed.
  ZkError wait_connected(Clock::time_point deadline) const {
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

  // From now on the state stays `closed` and the listener is not called; a call in progress is
  // waited for (it must not block), unless close() was called from inside it.
  void mark_closed(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    state_ = SessionState::closed;
    changed_.notify_all();
    if (listener_thread_ == std::this_thread::get_id()) return;
    changed_.wait_until(lock, deadline, [&] { return listener_thread_ == std::thread::id{}; });
  }

 private:
  // Records the state, then calls the listener without holding the lock (it may call back into the
  // Keeper, or take locks of its own that a caller of the Keeper holds).
  void publish(const SessionEvent& event) {
    {
      std::lock_guard lock(mutex_);
      if (state_ == SessionState::closed) return;
      state_ = event.state;
      changed_.notify_all();
      if (event.state == SessionState::connected && auth_pending_) {  // announced by on_auth
        held_ = event;
        return;
      }
      if (!listener_) return;
      listener_thread_ = std::this_thread::get_id();
    }
    listener_(event);
    std::lock_guard lock(mutex_);
    listener_thread_ = {};
    changed_.notify_all();
  }

  const Keeper::Listener listener_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<KnownServer> servers_;  // empty until the hosts are resolved
  SessionState state_ = SessionState::connecting;
  bool open_failed_ = false;
  bool auth_pending_ = false;  // zoo_add_auth's completion has not come yet
  std::optional<SessionEvent> held_;  // the connected event, until the credentials are accepted
  std::thread::id listener_thread_;  // set while the listener runs
  std::vector<std::unique_ptr<WatchSlot>> watches_;
};

// One request in the C client's hands; it delivers the caller's callback exactly once.
template <class R>
class Request {
 public:
  using Result = R;
  explicit Request(Keeper::Callback<R> done) : done_(std::move(done)) {}
  void deliver(R result) {
    if (!delivered_.test_and_set()) done_(std::move(result));
  }

 private:
  Keeper::Callback<R> done_;
  std::atomic_flag delivered_;
};

// A multi's per-operation answers are written by the client into `answers` when the reply comes,
// so they live as long as the request.
class MultiRequest : public Request<MultiResult> {
 public:
  // Marks an answer the client never wrote (the whole multi failed, e.g. on connection loss).
  static constexpr int kUnanswered = static_cast<int>(ZkError::not_attempted);

  MultiRequest(Keeper::Callback<MultiResult> done, std::size_t count)
      : Request(std::move(done)), answers(count, zoo_op_result_t{kUnanswered, nullptr, 0, nullptr}) {}
  std::vector<zoo_op_result_t> answers;
};

// The client takes a `const void*` per request and hands it to exactly one completion: it holds
// one reference to the request until then.
template <class Req>
const void* hand_to_client(const std::shared_ptr<Req>& request) {
  return new std::shared_ptr<Req>(request);
}
template <class Req>
std::shared_ptr<Req> take_back(const void* context) {
  std::unique_ptr<std::shared_ptr<Req>> holder(static_cast<std::shared_ptr<Req>*>(const_cast<void*>(context)));
  return std::move(*holder);
}

NodeStat node_stat(const Stat* stat) {
  if (!stat) return {};
  return {Zxid{static_cast<std::uint64_t>(stat->czxid)}, Zxid{static_cast<std::uint64_t>(stat->mzxid)},
          stat->version, std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(stat->ctime))};
}

// A result whose error is the client's return code (ZOK included).
template <class R>
R with_error(int rc) {
  R result;
  result.error = zk_error_from_code(rc);
  return result;
}

// The completions: C function pointers, one per result shape.
void on_created(int rc, const char* path, const Stat* stat, const void* context) {
  auto result = with_error<CreateResult>(rc);
  if (rc == ZOK) {
    if (path) result.path = path;
    result.stat = node_stat(stat);
  }
  take_back<Request<CreateResult>>(context)->deliver(std::move(result));
}

void on_read(int rc, const char* value, int length, const Stat* stat, const void* context) {
  auto result = with_error<GetResult>(rc);
  if (rc == ZOK) {
    if (value && length > 0) result.data.assign(value, static_cast<std::size_t>(length));
    result.stat = node_stat(stat);
  }
  take_back<Request<GetResult>>(context)->deliver(std::move(result));
}

void on_stat(int rc, const Stat* stat, const void* context) {
  auto result = with_error<StatResult>(rc);
  if (rc == ZOK) result.stat = node_stat(stat);
  take_back<Request<StatResult>>(context)->deliver(std::move(result));
}

void on_children(int rc, const String_vector* names, const void* context) {
  auto result = with_error<ChildrenResult>(rc);
  if (rc == ZOK && names) {
    for (std::int32_t i = 0; i < names->count; ++i) result.children.emplace_back(names->data[i]);
    std::ranges::sort(result.children);  // the server's order is arbitrary
  }
  take_back<Request<ChildrenResult>>(context)->deliver(std::move(result));
}

// Only the schemes are kept: a digest entry's id is USER:base64(sha1(USER:PASSWORD)).
void on_acl(int rc, ACL_vector* acl, Stat* /*stat*/, const void* context) {
  auto result = with_error<AclResult>(rc);
  if (rc == ZOK && acl) {
    for (std::int32_t i = 0; i < acl->count; ++i)
      if (acl->data[i].id.scheme) result.schemes.emplace_back(acl->data[i].id.scheme);
    std::ranges::sort(result.schemes);
    result.schemes.erase(std::unique(result.schemes.begin(), result.schemes.end()), result.schemes.end());
  }
  take_back<Request<AclResult>>(context)->deliver(std::move(result));
}

void on_done(int rc, const void* context) {
  take_back<Request<DoneResult>>(context)->deliver(with_error<DoneResult>(rc));
}

void on_synced(int rc, const char* /*path*/, const void* context) { on_done(rc, context); }

void on_multi_done(int rc, const void* context) {
  auto request = take_back<MultiRequest>(context);
  auto result = with_error<MultiResult>(rc);
  for (const auto& answer : request->answers)
    result.each.push_back(answer.err == MultiRequest::kUnanswered ? result.error : zk_error_from_code(answer.err));
  request->deliver(std::move(result));
}

int create_flags(CreateMode mode) {
  switch (mode) {
    case CreateMode::persistent: return ZOO_PERSISTENT;
    case CreateMode::ephemeral: return ZOO_EPHEMERAL;
    case CreateMode::persistent_sequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::ephemeral_sequential: return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

int length_of(const std::string& data) { return static_cast<int>(data.size()); }

// Fills `op` with pointers into `request`, which must outlive the zoo_amulti call (not the reply).
void describe(const MultiOp& request, zoo_op_t& op, ACL_vector* acl) {
  switch (request.kind) {
    case MultiOp::Kind::create:
      zoo_create_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data), acl,
                         create_flags(request.mode), nullptr, 0);
      return;
    case MultiOp::Kind::remove: zoo_delete_op_init(&op, request.path.c_str(), request.version); return;
    case MultiOp::Kind::set:
      zoo_set_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data), request.version,
                      nullptr);
      return;
    case MultiOp::Kind::check: zoo_check_op_init(&op, request.path.c_str(), request.version); return;
  }
}

// The session's handle, shared by the CKeeper and the threads that open and close it: any of them
// may be the last to let go.
struct HandleSlot {
  // Guards the rest. No call uses the handle once close() took it (zookeeper_close frees it).
  std::mutex mutex;
  zhandle_t* handle = nullptr;  // null until opened, and once close() took it
  bool close_started = false;
  std::vector<zhandle_t*> retired;  // handles the session moved away from (move_to), closed after it
  std::string wide_hosts;  // every server's "address:port" while the handle has only the first choices
  // A 3.4 server answered create2 with ZUNIMPLEMENTED: this session's creates use create + exists.
  std::atomic<bool> create2_unimplemented{false};
};

// Hands `request` to the client through `call(handle, context)`. Without a handle (the hosts are
// still being looked up, or none resolved) the session is not connected: connection_loss, as the
// client answers what it cannot send. A refused request is answered on a thread of its own:
// callbacks never run inside the call that started the operation (its caller may hold a lock the
// callback takes). ZMARSHALLINGERROR is ambiguous: the client returns it when it queued nothing
// (an invalid path inside a multi) and when it queued the completion but not the request (out of
// memory). So the context then stays with the client: a later completion finds the result
// delivered, and in the first case the context leaks (a few bytes, for a caller's bug).
template <class Req, class Call>
void submit_to(HandleSlot& slot, const std::shared_ptr<Req>& request, Call call) {
  int rc = ZOK;
  {
    std::lock_guard lock(slot.mutex);
    if (slot.close_started) {
      rc = ZCLOSING;
    } else if (!slot.handle) {
      rc = ZCONNECTIONLOSS;
    } else {
      const void* context = hand_to_client(request);
      rc = call(slot.handle, context);
      if (rc != ZOK && rc != ZMARSHALLINGERROR) take_back<Req>(context);
    }
  }
  if (rc == ZOK) return;
  auto refusal = with_error<typename Req::Result>(rc);
  std::thread([request, refusal = std::move(refusal)]() mutable { request->deliver(std::move(refusal)); }).detach();
}

void on_created_path(int rc, const char* path, const void* context) {
  auto result = with_error<CreateResult>(rc);
  if (rc == ZOK && path) result.path = path;
  take_back<Request<CreateResult>>(context)->deliver(std::move(result));
}

// A create as a 3.4 server can take it (it knows no create2): create, then exists for the stat.
struct PlainCreate {
  std::shared_ptr<SessionShared> shared;
  std::shared_ptr<HandleSlot> slot;
  std::string path, data;
  CreateMode mode = CreateMode::persistent;
  ACL_vector* acl = nullptr;             // a static of the C client's
  Clock::time_point reconnect_deadline;  // the retry after a dropped connection waits until then
};

// The created node's stat, from exists on the same session (it reads its own write).
void stat_created(const PlainCreate& create, CreateResult created, Keeper::Callback<CreateResult> done) {
  auto path = created.path;
  auto request = std::make_shared<Request<StatResult>>(
      [created = std::move(created), done = std::move(done)](StatResult stat) mutable {
        if (stat.error == ZkError::ok) created.stat = stat.stat;
        else created.error = stat.error;  // created, but its czxid is unknown: the path says what to remove
        done(std::move(created));
      });
  submit_to(*create.slot, request,
            [&](zhandle_t* zh, const void* context) { return zoo_aexists(zh, path.c_str(), 0, &on_stat, context); });
}

// A 3.4 server answers an unknown operation and then drops the connection: a create sent right
// after the answer is lost with it (connection_loss, never applied), so it is sent once more when
// the session is back, by the deadline. Waiting runs on a thread of its own: the session's events
// arrive on the completion thread this is called from.
void create_then_stat(const std::shared_ptr<const PlainCreate>& create, bool may_retry,
                      Keeper::Callback<CreateResult> done) {
  auto request = std::make_shared<Request<CreateResult>>(
      [create, may_retry, done = std::move(done)](CreateResult created) mutable {
        if (created.error == ZkError::connection_loss && may_retry) {
          std::thread([create, done = std::move(done)]() mutable {
            auto connected = create->shared->wait_connected(create->reconnect_deadline);
            if (connected == ZkError::ok) return create_then_stat(create, false, std::move(done));
            done(with_error<CreateResult>(ZCONNECTIONLOSS));
          }).detach();
        } else if (created.error == ZkError::ok) {
          stat_created(*create, std::move(created), std::move(done));
        } else {
          done(std::move(created));
        }
      });
  submit_to(*create->slot, request, [&](zhandle_t* zh, const void* context) {
    return zoo_acreate(zh, create->path.c_str(), create->data.data(), length_of(create->data), create->acl,
                       create_flags(create->mode), &on_created_path, context);
  });
}

class CKeeper final : public Keeper {
 public:
  CKeeper(const std::vector<ServerAddress>& servers, const KeeperOptions& options, Listener listener);
  ~CKeeper() override;
  CKeeper(const CKeeper&) = delete;
  CKeeper& operator=(const CKeeper&) = delete;

  ZkError wait_connected(Clock::time_point deadline) override;
  [[nodiscard]] SessionState state() const override { return shared_->state(); }
  [[nodiscard]] std::optional<std::int64_t> session_id() const override;
  [[nodiscard]] std::string connected_server() const override;
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const override;

  void create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) override;
  void get(const std::string& path, Callback<GetResult> done) override;
  void set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) override;
  void exists(const std::string& path, Callback<StatResult> done) override;
  void children(const std::string& path, Callback<ChildrenResult> done) override;
  void remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) override;
  void sync(const std::string& path, Callback<DoneResult> done) override;
  void multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) override;
  void get_acl(const std::string& path, Callback<AclResult> done) override;
  [[nodiscard]] bool presents_credentials() const override { return credentials_.has_value(); }
  void get_and_watch(const std::string& path, Callback<GetResult> done,
                     std::function<void(WatchNotice)> fired) override;
  ZkError move_to(const std::string& server) override;
  void widen() override;

  bool close(Clock::time_point deadline) override;

 private:
  template <class R, class Call>
  void submit(Callback<R> done, Call call);
  template <class Req, class Call>
  void submit_request(const std::shared_ptr<Req>& request, Call call);
  [[nodiscard]] bool connected() const { return shared_->state() == SessionState::connected; }
  // What the session creates: creator-only (its credentials' identity) when it has credentials.
  [[nodiscard]] ACL_vector* acl() const { return credentials_ ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE; }

  const std::optional<Credentials> credentials_;

  const std::shared_ptr<SessionShared> shared_;
  const std::shared_ptr<HandleSlot> slot_;
  std::shared_future<void> closed_;  // ready once zookeeper_close returned; guarded by slot_->mutex
};

zhandle_t* open_handle(const std::vector<KnownServer>& servers, const KeeperOptions& options, void* context) {
  auto flags = configure_client();
  auto choices = options.first_choices == 0 ? servers.size() : std::min(options.first_choices, servers.size());
  std::vector<KnownServer> first(servers.begin(), servers.begin() + static_cast<std::ptrdiff_t>(choices));
  if (!options.in_order && first.size() > 1) {
    std::mt19937 random{std::random_device{}()};  // once per session: each opens on a thread of its own
    std::ranges::shuffle(first, random);
  }
  auto* zh = zookeeper_init(connect_string(first).c_str(), &SessionShared::on_event,
                            static_cast<int>(options.session_timeout.count()), nullptr, context, flags);
  // By default the client looks the hosts up again on every I/O loop; numeric ones would only give
  // the same addresses. -1: only after a connection loss (where numeric hosts cost no DNS either).
  if (zh) zoo_set_servers_resolution_delay(zh, -1);
  return zh;
}

// Right after zookeeper_init, before any operation: the client sends the credentials first on every
// connection (ahead of queued requests) and calls on_auth once with the server's answer.
void add_credentials(zhandle_t* zh, const std::optional<Credentials>& credentials, SessionShared& shared) {
  if (!credentials) return;
  shared.expect_auth();
  auto data = auth_data(*credentials);
  int rc = zoo_add_auth(zh, credentials->scheme.c_str(), data.data(), static_cast<int>(data.size()),
                        &SessionShared::on_auth, &shared);
  if (rc != ZOK) SessionShared::on_auth(ZAUTHFAILED, &shared);
}

// Opens the session on a thread of its own, so that open() returns at once: looking names up can
// take long, and zookeeper_init would do it synchronously on the caller's thread. The thread owns
// what it touches; when close() came first, it opens nothing.
void open_session(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                  const std::shared_ptr<SessionShared>& shared, const std::shared_ptr<HandleSlot>& slot) {
  // Callers wait for the session with deadlines of their own; this one only ends the thread. A
  // server not resolved within the session timeout could not hold a session anyway.
  auto known = resolve_servers(servers, Clock::now() + options.session_timeout);
  std::lock_guard lock(slot->mutex);
  if (slot->close_started) return;
  if (!known.empty()) {
    shared->set_servers(known);
    slot->handle = open_handle(known, options, shared.get());
    if (options.first_choices != 0 && options.first_choices < known.size()) slot->wide_hosts = connect_string(known);
    if (slot->handle) add_credentials(slot->handle, options.credentials, *shared);
  }
  if (!slot->handle) shared->mark_open_failed();
}

CKeeper::CKeeper(const std::vector<ServerAddress>& servers, const KeeperOptions& options, Listener listener)
    : credentials_(options.credentials),
      shared_(std::make_shared<SessionShared>(std::move(listener))),
      slot_(std::make_shared<HandleSlot>()) {
  // std::thread copies its arguments: the thread holds its own servers, options and owners.
  std::thread(open_session, servers, options, shared_, slot_).detach();
}

CKeeper::~CKeeper() {
  bool close_started = false;
  {
    std::lock_guard lock(slot_->mutex);
    close_started = slot_->close_started;
  }
  // Bounded: a close that takes longer is abandoned, and the server expires the session.
  if (!close_started) close(Clock::now() + std::chrono::seconds(2));
}

ZkError CKeeper::wait_connected(Clock::time_point deadline) { return shared_->wait_connected(deadline); }

std::optional<std::int64_t> CKeeper::session_id() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle || !connected()) return std::nullopt;
  return zoo_client_id(slot_->handle)->client_id;
}

std::string CKeeper::connected_server() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle) return {};
  return shared_->connected_name(slot_->handle);
}

std::chrono::milliseconds CKeeper::negotiated_timeout() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle || !connected()) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(zoo_recv_timeout(slot_->handle));
}

template <class R, class Call>
void CKeeper::submit(Callback<R> done, Call call) {
  submit_request(std::make_shared<Request<R>>(std::move(done)), std::move(call));
}

// See submit_to.
template <class Req, class Call>
void CKeeper::submit_request(const std::shared_ptr<Req>& request, Call call) {
  submit_to(*slot_, request, std::move(call));
}

// create2 answers the stat with the path; a 3.4 server does not know it (ZUNIMPLEMENTED, remembered
// for the session's later creates), and then create + exists stand in for it.
void CKeeper::create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) {
  auto wait = std::max<std::chrono::milliseconds>(negotiated_timeout(), std::chrono::seconds(1));
  auto plain =
      std::make_shared<const PlainCreate>(PlainCreate{shared_, slot_, path, data, mode, acl(), Clock::now() + wait});
  if (slot_->create2_unimplemented) return create_then_stat(plain, true, std::move(done));
  auto request = std::make_shared<Request<CreateResult>>([plain, done = std::move(done)](CreateResult result) mutable {
    if (result.error != ZkError::unimplemented) return done(std::move(result));
    plain->slot->create2_unimplemented = true;
    create_then_stat(plain, true, std::move(done));
  });
  submit_request(request, [&](zhandle_t* zh, const void* context) {
    return zoo_acreate2(zh, path.c_str(), data.data(), length_of(data), acl(), create_flags(mode), &on_created,
                        context);
  });
}

void CKeeper::get(const std::string& path, Callback<GetResult> done) {
  submit(std::move(done),
         [&](zhandle_t* zh, const void* context) { return zoo_aget(zh, path.c_str(), 0, &on_read, context); });
}

void CKeeper::set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) {
  submit(std::move(done), [&](zhandle_t* zh, const void* context) {
    return zoo_aset(zh, path.c_str(), data.data(), length_of(data), version, &on_stat, context);
  });
}

void CKeeper::exists(const std::string& path, Callback<StatResult> done) {
  submit(std::move(done),
         [&](zhandle_t* zh, const void* context) { return zoo_aexists(zh, path.c_str(), 0, &on_stat, context); });
}

void CKeeper::children(const std::string& path, Callback<ChildrenResult> done) {
  submit(std::move(done), [&](zhandle_t* zh, const void* context) {
    return zoo_aget_children(zh, path.c_str(), 0, &on_children, context);
  });
}

void CKeeper::remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) {
  submit(std::move(done),
         [&](zhandle_t* zh, const void* context) { return zoo_adelete(zh, path.c_str(), version, &on_done, context); });
}

void CKeeper::sync(const std::string& path, Callback<DoneResult> done) {
  submit(std::move(done),
         [&](zhandle_t* zh, const void* context) { return zoo_async(zh, path.c_str(), &on_synced, context); });
}

void CKeeper::multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) {
  auto request = std::make_shared<MultiRequest>(std::move(done), ops.size());
  std::vector<zoo_op_t> c_ops(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) describe(ops[i], c_ops[i], acl());
  submit_request(request, [&](zhandle_t* zh, const void* context) {
    return zoo_amulti(zh, static_cast<int>(c_ops.size()), c_ops.data(), request->answers.data(), &on_multi_done,
                      context);
  });
}

void CKeeper::get_acl(const std::string& path, Callback<AclResult> done) {
  submit(std::move(done),
         [&](zhandle_t* zh, const void* context) { return zoo_aget_acl(zh, path.c_str(), &on_acl, context); });
}

void CKeeper::get_and_watch(const std::string& path, Callback<GetResult> done,
                            std::function<void(WatchNotice)> fired) {
  auto* watch = shared_->keep_watch(std::move(fired));
  submit(std::move(done), [&](zhandle_t* zh, const void* context) {
    return zoo_awget(zh, path.c_str(), &SessionShared::on_watch, watch, &on_read, context);
  });
}

// The C client cannot move a session on its own here: zoo_set_servers keeps the connection when
// the connected server's IP is in the new list (addrvec_contains compares addresses, not ports:
// every server of a loopback ensemble matches), and zoo_cycle_next_server only picks the next
// attempt. So a second handle resumes the session (its id and password) on the target, as a client
// reconnecting elsewhere does, and the old handle is retired: its watcher silenced, closed only
// after the session (a close through it first would end the session).
// zoo_set_servers takes effect at the next connection attempt: the client is between servers when
// the watch widens a session (ZooKeeper's rebalancing only moves a connected one).
void CKeeper::widen() {
  std::lock_guard lock(slot_->mutex);
  if (slot_->close_started || !slot_->handle || slot_->wide_hosts.empty()) return;
  if (zoo_set_servers(slot_->handle, slot_->wide_hosts.c_str()) == ZOK) slot_->wide_hosts.clear();
}

ZkError CKeeper::move_to(const std::string& server) {
  auto hosts = shared_->hosts_of(server);
  if (hosts.empty()) return ZkError::bad_arguments;
  std::lock_guard lock(slot_->mutex);
  if (slot_->close_started) return ZkError::closing;
  if (!slot_->handle || !connected()) return ZkError::connection_loss;
  clientid_t session = *zoo_client_id(slot_->handle);
  auto timeout = zoo_recv_timeout(slot_->handle);
  zoo_set_watcher(slot_->handle, &ignore_event);
  shared_->mark_moving(true);  // before the new handle can report connected
  auto* moved = zookeeper_init(hosts.c_str(), &SessionShared::on_event, timeout, &session, shared_.get(),
                               configure_client());
  if (!moved) {
    zoo_set_watcher(slot_->handle, &SessionShared::on_event);
    shared_->mark_moving(false);
    return ZkError::system_error;
  }
  zoo_set_servers_resolution_delay(moved, -1);
  add_credentials(moved, credentials_, *shared_);  // credentials belong to a connection, not the session
  slot_->retired.push_back(std::exchange(slot_->handle, moved));
  return ZkError::ok;
}

// zookeeper_close can block for seconds (closing a session is a quorum transaction), so it runs on
// a thread of its own that owns everything it touches: the handle and the watcher's context.
bool CKeeper::close(Clock::time_point deadline) {
  shared_->mark_closed(deadline);
  std::shared_future<void> closed;
  {
    std::lock_guard lock(slot_->mutex);
    if (!slot_->close_started) {
      slot_->close_started = true;
      std::promise<void> finished;
      closed_ = finished.get_future().share();
      if (slot_->handle) {
        auto closing = [handle = std::exchange(slot_->handle, nullptr), retired = std::exchange(slot_->retired, {}),
                        shared = shared_, finished = std::move(finished)]() mutable {
          zookeeper_close(handle);
          // Once the session is closed, each retired handle's server has dropped its connection,
          // so closing it sends nothing that could end a session.
          for (auto* old : retired) zookeeper_close(old);
          finished.set_value();
        };
        std::thread(std::move(closing)).detach();
      } else {
        finished.set_value();
      }
    }
    closed = closed_;
  }
  return closed.wait_until(deadline) == std::future_status::ready;
}

class CKeeperFactory final : public KeeperFactory {
 public:
  std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                               Keeper::Listener listener) override {
    return std::make_unique<CKeeper>(servers, options, std::move(listener));
  }
};

}  // namespace

KeeperFactory& c_keeper_factory() {
  static CKeeperFactory factory;
  return factory;
}

}  // namespace zkverify::probes
