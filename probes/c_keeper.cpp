#include "probes/c_keeper.hpp"

#include <algorithm>
#include <future>
#include <mutex>
#include <random>
#include <utility>

#include <zookeeper/zookeeper.h>
#include <boost/asio/post.hpp>

#include "probes/c_client.hpp"
#include "probes/c_create.hpp"
#include "probes/c_requests.hpp"
#include "probes/c_session.hpp"

namespace zkverify::probes {

namespace {

using namespace c_client;

int length_of(const std::string& data) { return static_cast<int>(data.size()); }

// The watcher of a handle the session moved away from: its events are no longer the session's.
void ignore_event(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/, void* /*context*/) {}

class CKeeper final : public Keeper {
 public:
  CKeeper(Executor& executor, Resolver& resolver, const std::vector<ServerAddress>& servers,
          const KeeperOptions& options, Listener listener);
  ~CKeeper() override;
  CKeeper(const CKeeper&) = delete;
  CKeeper& operator=(const CKeeper&) = delete;

  ZkError wait_connected(Clock::time_point deadline) override;
  [[nodiscard]] SessionState state() const override { return core_->state(); }
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
  bool wait_connected_to(const std::string& server, Clock::time_point deadline) const override {
    return core_->wait_connected_to(server, deadline);
  }
  [[nodiscard]] bool close_ends_session() const override { return true; }
  void widen() override;

  bool close(Clock::time_point deadline) override;

 private:
  template <class R, class Call>
  void submit(Callback<R> done, Call call);
  template <class Req, class Call>
  void submit_request(const std::shared_ptr<Req>& request, Call call);
  [[nodiscard]] bool connected() const { return core_->state() == SessionState::connected; }
  // What the session creates: creator-only (its credentials' identity) when it has credentials.
  [[nodiscard]] ACL_vector* acl() const { return credentials_ ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE; }

  Executor& executor_;
  const std::optional<Credentials> credentials_;

  const std::shared_ptr<SessionCore> core_;
  const std::shared_ptr<HandleSlot> slot_;
  std::shared_future<void> closed_;  // ready once zookeeper_close returned; guarded by slot_->mutex
};

zhandle_t* open_handle(const std::vector<KnownServer>& servers, const KeeperOptions& options, void* context) {
  auto flags = configure();
  auto choices = options.first_choices == 0 ? servers.size() : std::min(options.first_choices, servers.size());
  std::vector<KnownServer> first(servers.begin(), servers.begin() + static_cast<std::ptrdiff_t>(choices));
  if (!options.in_order && first.size() > 1) {
    std::mt19937 random{std::random_device{}()};
    std::ranges::shuffle(first, random);
  }
  auto* zh = zookeeper_init(connect_string(first).c_str(), &SessionCore::on_event,
                            static_cast<int>(options.session_timeout.count()), nullptr, context, flags);
  // By default the client looks the hosts up again on every I/O loop; numeric ones would only give
  // the same addresses. -1: only after a connection loss (where numeric hosts cost no DNS either).
  if (zh) zoo_set_servers_resolution_delay(zh, -1);
  return zh;
}

// Right after zookeeper_init, before any operation: the client sends the credentials first on every
// connection (ahead of queued requests) and calls on_auth once with the server's answer.
void add_credentials(zhandle_t* zh, const std::optional<Credentials>& credentials, SessionCore& core) {
  if (!credentials) return;
  core.expect_auth();
  auto data = auth_data(*credentials);
  int rc = zoo_add_auth(zh, credentials->scheme.c_str(), data.data(), static_cast<int>(data.size()),
                        &SessionCore::on_auth, &core);
  if (rc != ZOK) SessionCore::on_auth(ZAUTHFAILED, &core);
}

// zookeeper_init on a worker (it takes a millisecond or more, and handles open concurrently), once
// the hosts are known; nothing when close() came first. A server not resolved within the session
// timeout could not hold a session anyway.
void open_session(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                  std::vector<Resolution> found, const std::shared_ptr<SessionCore>& core,
                  const std::shared_ptr<HandleSlot>& slot) {
  auto known = known_servers(servers, std::move(found));
  std::lock_guard lock(slot->mutex);
  if (slot->close_started) return;
  if (!known.empty()) {
    core->set_servers(known);
    slot->handle = open_handle(known, options, core.get());
    if (options.first_choices != 0 && options.first_choices < known.size()) slot->wide_hosts = connect_string(known);
    if (slot->handle) add_credentials(slot->handle, options.credentials, *core);
  }
  if (!slot->handle) core->mark_open_failed();
}

CKeeper::CKeeper(Executor& executor, Resolver& resolver, const std::vector<ServerAddress>& servers,
                 const KeeperOptions& options, Listener listener)
    : executor_(executor),
      credentials_(options.credentials),
      core_(std::make_shared<SessionCore>(executor.io().get_executor(), std::move(listener))),
      slot_(std::make_shared<HandleSlot>()) {
  std::vector<std::string> hosts;
  for (const auto& server : servers) hosts.push_back(server.host);
  resolve_all(core_->strand(), resolver, std::move(hosts), Clock::now() + options.session_timeout,
              [&executor, servers, options, core = core_, slot = slot_](std::vector<Resolution> found) {
                executor.run_blocking([servers, options, found = std::move(found), core, slot]() mutable {
                  open_session(servers, options, std::move(found), core, slot);
                });
              });
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

ZkError CKeeper::wait_connected(Clock::time_point deadline) { return core_->wait_connected(deadline); }

std::optional<std::int64_t> CKeeper::session_id() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle || !connected()) return std::nullopt;
  return zoo_client_id(slot_->handle)->client_id;
}

std::string CKeeper::connected_server() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle) return {};
  return core_->connected_name(slot_->handle);
}

std::chrono::milliseconds CKeeper::negotiated_timeout() const {
  std::lock_guard lock(slot_->mutex);
  if (!slot_->handle || !connected()) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(zoo_recv_timeout(slot_->handle));
}

template <class R, class Call>
void CKeeper::submit(Callback<R> done, Call call) {
  submit_request(std::make_shared<Request<R>>(core_->strand(), std::move(done)), std::move(call));
}

// See submit_to.
template <class Req, class Call>
void CKeeper::submit_request(const std::shared_ptr<Req>& request, Call call) {
  submit_to(*slot_, request, std::move(call));
}

// create + exists on every line (c_create.hpp says why not create2).
void CKeeper::create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) {
  create_then_stat(std::make_shared<const PlainCreate>(PlainCreate{core_, slot_, path, data, mode, acl()}),
                   std::move(done));
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
  auto request = std::make_shared<MultiRequest>(core_->strand(), std::move(done), ops.size());
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

void CKeeper::get_and_watch(const std::string& path, Callback<GetResult> done, std::function<void(WatchNotice)> fired) {
  // The watch fires on the session's strand, like its completions.
  auto* watch = core_->keep_watch([strand = core_->strand(), fired = std::move(fired)](WatchNotice notice) {
    boost::asio::post(strand, [fired, notice = std::move(notice)] { fired(notice); });
  });
  submit(std::move(done), [&](zhandle_t* zh, const void* context) {
    return zoo_awget(zh, path.c_str(), &SessionCore::on_watch, watch, &on_read, context);
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
  auto hosts = core_->hosts_of(server);
  if (hosts.empty()) return ZkError::bad_arguments;
  std::lock_guard lock(slot_->mutex);
  if (slot_->close_started) return ZkError::closing;
  if (!slot_->handle || !connected()) return ZkError::connection_loss;
  clientid_t session = *zoo_client_id(slot_->handle);
  auto timeout = zoo_recv_timeout(slot_->handle);
  zoo_set_watcher(slot_->handle, &ignore_event);
  core_->mark_moving(true);  // before the new handle can report connected
  auto* moved = zookeeper_init(hosts.c_str(), &SessionCore::on_event, timeout, &session, core_.get(), configure());
  if (!moved) {
    zoo_set_watcher(slot_->handle, &SessionCore::on_event);
    core_->mark_moving(false);
    return ZkError::system_error;
  }
  zoo_set_servers_resolution_delay(moved, -1);
  add_credentials(moved, credentials_, *core_);  // credentials belong to a connection, not the session
  slot_->retired.push_back(std::exchange(slot_->handle, moved));
  return ZkError::ok;
}

// zookeeper_close can block for seconds (closing a session is a quorum transaction), so it runs on
// a worker, with everything it touches: the handle and the watcher's context.
bool CKeeper::close(Clock::time_point deadline) {
  core_->mark_closed(deadline);
  std::shared_future<void> closed;
  {
    std::lock_guard lock(slot_->mutex);
    if (!slot_->close_started) {
      slot_->close_started = true;
      auto finished = std::make_shared<std::promise<void>>();
      closed_ = finished->get_future().share();
      if (slot_->handle) {
        executor_.run_blocking([handle = std::exchange(slot_->handle, nullptr),
                                retired = std::exchange(slot_->retired, {}), core = core_, finished] {
          zookeeper_close(handle);
          // Once the session is closed, each retired handle's server has dropped its connection,
          // so closing it sends nothing that could end a session.
          for (auto* old : retired) zookeeper_close(old);
          finished->set_value();
        });
      } else {
        finished->set_value();
      }
    }
    closed = closed_;
  }
  return closed.wait_until(deadline) == std::future_status::ready;
}

}  // namespace

std::unique_ptr<Keeper> CKeeperFactory::open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                                             Keeper::Listener listener) {
  return std::make_unique<CKeeper>(executor_, resolver_, servers, options, std::move(listener));
}

}  // namespace zkverify::probes
