#include "probes/c_keeper.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

#include <zookeeper/zookeeper.h>

namespace zkverify::probes {

namespace {

// The C client logs connection attempts to stderr; zkverify reports errors itself, so the log goes
// nowhere unless ZKVERIFY_ZK_LOG names a file.
void configure_client_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* target = std::getenv("ZKVERIFY_ZK_LOG");
    // Intentionally never closed: the C client may log until the process exits.
    FILE* stream = std::fopen(target ? target : "/dev/null", "a");
    if (stream) zoo_set_log_stream(stream);
    zoo_set_debug_level(target ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_ERROR);
  });
}

// "host:port,..." for zookeeper_init. IPv6 hosts go without brackets: the 3.8 client splits each
// entry at its last colon and does not understand "[::1]:2181".
std::string connect_string(const std::vector<ServerAddress>& servers) {
  std::string hosts;
  for (const auto& server : servers) {
    if (!hosts.empty()) hosts += ',';
    hosts += server.host + ':' + std::to_string(server.port);
  }
  return hosts;
}

std::string numeric_host(const sockaddr* address, socklen_t length) {
  char text[NI_MAXHOST];
  if (getnameinfo(address, length, text, sizeof text, nullptr, 0, NI_NUMERICHOST) != 0) return {};
  return text;
}

std::optional<std::uint16_t> port_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  return std::nullopt;
}

// A listed server with the numeric addresses its host stands for, so that the peer address of the
// session's socket can be mapped back to the server's name.
struct KnownServer {
  std::string name;
  std::uint16_t port = 0;
  std::vector<std::string> addresses;  // "127.0.0.1", "::1"
};

// Resolves like the C client does in zookeeper_init (same resolver, same names, so no new wait).
std::vector<std::string> numeric_addresses(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return {host};
  std::vector<std::string> addresses;
  for (const addrinfo* entry = found; entry; entry = entry->ai_next)
    addresses.push_back(numeric_host(entry->ai_addr, entry->ai_addrlen));
  freeaddrinfo(found);
  return addresses;
}

std::vector<KnownServer> known_servers(const std::vector<ServerAddress>& servers) {
  std::vector<KnownServer> known;
  for (const auto& server : servers) known.push_back({server.name, server.port, numeric_addresses(server.host)});
  return known;
}

// The listed name of the server `zh` is connected to: "" while not connected, "host:port" when the
// peer is none of the listed servers.
std::string connected_name(zhandle_t* zh, const std::vector<KnownServer>& servers) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (!zookeeper_get_connected_host(zh, reinterpret_cast<sockaddr*>(&peer), &length)) return {};
  auto host = numeric_host(reinterpret_cast<const sockaddr*>(&peer), length);
  auto port = port_of(peer);
  for (const auto& server : servers)
    if (port == server.port && std::ranges::find(server.addresses, host) != server.addresses.end()) return server.name;
  return host + ':' + (port ? std::to_string(*port) : std::string("?"));
}

SessionState session_state_of(int state) {
  if (state == ZOO_CONNECTED_STATE) return SessionState::connected;
  if (state == ZOO_EXPIRED_SESSION_STATE) return SessionState::expired;
  if (state == ZOO_AUTH_FAILED_STATE) return SessionState::auth_failed;
  return SessionState::connecting;  // connecting, associating, not yet connected
}

// What the C client's threads reach through the watcher's context. Owned jointly by the CKeeper
// and its close thread, so it lives as long as the client may call the watcher, which it can do
// while the CKeeper is being destroyed or after (an abandoned close is still running).
class SessionShared {
 public:
  SessionShared(std::vector<KnownServer> servers, Keeper::Listener listener)
      : servers_(std::move(servers)), listener_(std::move(listener)) {}

  // The C client's watcher; the session's events arrive on its completion thread, one at a time.
  static void on_event(zhandle_t* zh, int type, int state, const char* /*path*/, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto& self = *static_cast<SessionShared*>(context);
    SessionEvent event{session_state_of(state), {}, {}};
    if (event.state == SessionState::connected) {
      event.server = connected_name(zh, self.servers_);
      event.granted_timeout = std::chrono::milliseconds(zoo_recv_timeout(zh));
    }
    self.publish(event);
  }

  [[nodiscard]] SessionState state() const {
    std::lock_guard lock(mutex_);
    return state_;
  }
  [[nodiscard]] const std::vector<KnownServer>& servers() const { return servers_; }

  // Until the state is settled (connected, expired, auth failed, closed) or the deadline passes.
  SessionState wait_settled(Clock::time_point deadline) const {
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, deadline, [&] { return state_ != SessionState::connecting; });
    return state_;
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
      if (!listener_) return;
      listener_thread_ = std::this_thread::get_id();
    }
    listener_(event);
    std::lock_guard lock(mutex_);
    listener_thread_ = {};
    changed_.notify_all();
  }

  const std::vector<KnownServer> servers_;
  const Keeper::Listener listener_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  SessionState state_ = SessionState::connecting;
  std::thread::id listener_thread_;  // set while the listener runs
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
void describe(const MultiOp& request, zoo_op_t& op) {
  switch (request.kind) {
    case MultiOp::Kind::create:
      zoo_create_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data),
                         &ZOO_OPEN_ACL_UNSAFE, create_flags(request.mode), nullptr, 0);
      return;
    case MultiOp::Kind::remove: zoo_delete_op_init(&op, request.path.c_str(), request.version); return;
    case MultiOp::Kind::set:
      zoo_set_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data), request.version,
                      nullptr);
      return;
    case MultiOp::Kind::check: zoo_check_op_init(&op, request.path.c_str(), request.version); return;
  }
}

// zookeeper_init shuffles the server list unless this process-wide switch is set (re-resolving the
// same names later keeps the order), so opens set it and call zookeeper_init under one lock.
std::mutex& connection_order_mutex() {
  static std::mutex mutex;
  return mutex;
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

  bool close(Clock::time_point deadline) override;

 private:
  template <class R, class Call>
  void submit(Callback<R> done, Call call);
  template <class Req, class Call>
  void submit_request(const std::shared_ptr<Req>& request, Call call);
  [[nodiscard]] bool connected() const { return shared_->state() == SessionState::connected; }

  const std::shared_ptr<SessionShared> shared_;
  // Guards handle_, which no call uses once close() took it (zookeeper_close frees it).
  mutable std::mutex handle_mutex_;
  zhandle_t* handle_;
  const bool initialised_;  // zookeeper_init returned a handle
  bool close_started_ = false;
  std::shared_future<void> closed_;  // ready once zookeeper_close returned
};

zhandle_t* open_handle(const std::vector<ServerAddress>& servers, const KeeperOptions& options, void* context) {
  configure_client_log();
  std::lock_guard lock(connection_order_mutex());
  zoo_deterministic_conn_order(options.in_order ? 1 : 0);
  return zookeeper_init(connect_string(servers).c_str(), &SessionShared::on_event,
                        static_cast<int>(options.session_timeout.count()), nullptr, context, 0);
}

CKeeper::CKeeper(const std::vector<ServerAddress>& servers, const KeeperOptions& options, Listener listener)
    : shared_(std::make_shared<SessionShared>(known_servers(servers), std::move(listener))),
      handle_(open_handle(servers, options, shared_.get())),
      initialised_(handle_ != nullptr) {}

CKeeper::~CKeeper() {
  bool close_started = false;
  {
    std::lock_guard lock(handle_mutex_);
    close_started = close_started_;
  }
  // Bounded: a close that takes longer is abandoned, and the server expires the session.
  if (!close_started) close(Clock::now() + std::chrono::seconds(2));
}

ZkError CKeeper::wait_connected(Clock::time_point deadline) {
  if (!initialised_) return ZkError::system_error;
  switch (shared_->wait_settled(deadline)) {
    case SessionState::connected: return ZkError::ok;
    case SessionState::expired: return ZkError::session_expired;
    case SessionState::auth_failed: return ZkError::auth_failed;
    case SessionState::closed: return ZkError::closing;
    case SessionState::connecting: return ZkError::deadline_exceeded;
  }
  return ZkError::deadline_exceeded;
}

std::optional<std::int64_t> CKeeper::session_id() const {
  std::lock_guard lock(handle_mutex_);
  if (!handle_ || !connected()) return std::nullopt;
  return zoo_client_id(handle_)->client_id;
}

std::string CKeeper::connected_server() const {
  std::lock_guard lock(handle_mutex_);
  if (!handle_) return {};
  return connected_name(handle_, shared_->servers());
}

std::chrono::milliseconds CKeeper::negotiated_timeout() const {
  std::lock_guard lock(handle_mutex_);
  if (!handle_ || !connected()) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(zoo_recv_timeout(handle_));
}

template <class R, class Call>
void CKeeper::submit(Callback<R> done, Call call) {
  submit_request(std::make_shared<Request<R>>(std::move(done)), std::move(call));
}

// Hands `request` to the client through `call(handle, context)`. A refused request is answered on
// a thread of its own: callbacks never run inside the call that started the operation (its caller
// may hold a lock the callback takes). ZMARSHALLINGERROR is ambiguous: the client returns it when
// it queued nothing (an invalid path inside a multi) and when it queued the completion but not the
// request (out of memory). So the context then stays with the client: a later completion finds
// the result delivered, and in the first case the context leaks (a few bytes, for a caller's bug).
template <class Req, class Call>
void CKeeper::submit_request(const std::shared_ptr<Req>& request, Call call) {
  int rc = ZOK;
  {
    std::lock_guard lock(handle_mutex_);
    if (close_started_) {
      rc = ZCLOSING;
    } else if (!handle_) {
      rc = ZSYSTEMERROR;
    } else {
      const void* context = hand_to_client(request);
      rc = call(handle_, context);
      if (rc != ZOK && rc != ZMARSHALLINGERROR) take_back<Req>(context);
    }
  }
  if (rc == ZOK) return;
  auto refusal = with_error<typename Req::Result>(rc);
  std::thread([request, refusal = std::move(refusal)]() mutable { request->deliver(std::move(refusal)); }).detach();
}

void CKeeper::create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) {
  submit(std::move(done), [&](zhandle_t* zh, const void* context) {
    return zoo_acreate2(zh, path.c_str(), data.data(), length_of(data), &ZOO_OPEN_ACL_UNSAFE, create_flags(mode),
                        &on_created, context);
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
  for (std::size_t i = 0; i < ops.size(); ++i) describe(ops[i], c_ops[i]);
  submit_request(request, [&](zhandle_t* zh, const void* context) {
    return zoo_amulti(zh, static_cast<int>(c_ops.size()), c_ops.data(), request->answers.data(), &on_multi_done,
                      context);
  });
}

// zookeeper_close can block for seconds (closing a session is a quorum transaction), so it runs on
// a thread of its own that owns everything it touches: the handle and the watcher's context.
bool CKeeper::close(Clock::time_point deadline) {
  shared_->mark_closed(deadline);
  std::shared_future<void> closed;
  {
    std::lock_guard lock(handle_mutex_);
    if (!close_started_) {
      close_started_ = true;
      std::promise<void> finished;
      closed_ = finished.get_future().share();
      if (handle_) {
        auto closing = [handle = std::exchange(handle_, nullptr), shared = shared_,
                        finished = std::move(finished)]() mutable {
          zookeeper_close(handle);
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
