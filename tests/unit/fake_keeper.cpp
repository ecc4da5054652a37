#include "fake_keeper.hpp"

#include "fake_dispatcher.hpp"
#include "fake_tree.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

namespace zkverify::fake {

using probes::Keeper;

namespace {

// How long a session that lost its connection takes to reconnect.
constexpr auto kReconnectDelay = std::chrono::milliseconds(50);
// The epoch of every zxid the fake hands out.
constexpr std::uint64_t kEpoch = 1;

// One session as the ensemble sees it, shared by its Keeper and the dispatcher's tasks.
struct Session {
  std::vector<ServerAddress> servers;
  std::chrono::milliseconds timeout{0};
  Keeper::Listener listener;
  std::int64_t id = 0;  // given by the first server it connects to
  SessionState state = SessionState::connecting;
  std::size_t server = 0;            // index of the server it is connected to (or was, or tries)
  std::size_t choices = 0;           // it fails over among servers[0, choices) (widen(): all)
  std::size_t first_choices = 0;     // choices before widen()
  std::vector<std::string> crowded;  // widen()'s: servers past the first choices it does not try
  bool closing = false;              // close() was called: operations complete with `closing`
  bool close_hangs = false;          // ... and it never completes
  bool listening = true;             // false once close() began
  bool in_listener = false;
  std::optional<Credentials> credentials;   // presented before the first operation
  std::optional<SaslRefusal> sasl_refusal;  // a server refused its SASL (refuse_sasl)
};

using Task = Dispatcher::Task;

}  // namespace

struct Ensemble::State : std::enable_shared_from_this<Ensemble::State> {
  class Factory final : public probes::KeeperFactory {
   public:
    explicit Factory(State& state) : state_(state) {}
    std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const probes::KeeperOptions& options,
                                 Keeper::Listener listener) override;

   private:
    State& state_;
  };

  // Operations (all take the lock themselves).
  std::shared_ptr<Session> open_session(const std::vector<ServerAddress>& servers, const probes::KeeperOptions& options,
                                        Keeper::Listener listener);
  template <class R, class Apply>
  void start(const std::shared_ptr<Session>& session, OpKind op, const std::string& path, Keeper::Callback<R> done,
             Apply apply);
  ZkError wait_connected(const Session& session, Clock::time_point deadline);
  bool close(const std::shared_ptr<Session>& session, Clock::time_point deadline);
  void expire_on(const std::string& server);

  // With the lock held.
  // `moving`: the session was moved (servers refusing moved sessions are skipped).
  void connect(const std::shared_ptr<Session>& session, std::size_t first, bool moving = false);
  void lose_connection(const std::shared_ptr<Session>& session);
  void expire(const std::shared_ptr<Session>& session);
  void remove_ephemerals(std::int64_t session);
  void watch(const std::shared_ptr<Session>& session, const std::string& path, std::function<void(WatchNotice)> fired,
             bool children = false);
  void fire_watches(const std::string& path, WatchKind kind);
  void drop_watches(const std::shared_ptr<Session>& session, bool notify);
  ZkError move(const std::shared_ptr<Session>& session, const std::string& server);
  bool return_home(const std::shared_ptr<Session>& session);
  int server_id(const std::string& server);
  std::optional<Fault> fault_for(OpKind op, const std::string& server, const std::string& path);
  [[nodiscard]] std::string server_of(const Session& session) const;
  std::optional<ZkError> refusal(const Session& session) const;
  void post(Task task, Clock::duration after) { dispatcher.post(std::move(task), after); }
  template <class R>
  void complete(Keeper::Callback<R> done, R result);
  void announce(const std::shared_ptr<Session>& session, SessionEvent event);
  [[nodiscard]] Zxid next_zxid() const { return {kEpoch << 32 | (last_zxid + 1)}; }

  // ACLs (with the lock held). deny: sets `error` to no_auth, and says so, when `path` exists and its
  // ACL refuses the session `need`. own: a node the session created is creator-only when it has
  // credentials. accepts: the credentials may connect (reject_unknown: only owners' do).
  bool deny(const Session& session, Need need, const std::string& path, ZkError& error) const;
  void own(const Session& session, const std::string& path);
  [[nodiscard]] bool accepts(const std::optional<Credentials>& credentials) const;
  [[nodiscard]] AclResult acl_result(const Session& session, const std::string& path) const;
  bool deny_multi(const Session& session, const std::vector<MultiOp>& ops, MultiResult& result) const;

  // Without the lock: runs on the dispatcher.
  void deliver_event(const std::shared_ptr<Session>& session, const SessionEvent& event);

  Factory factory{*this};
  mutable std::mutex mutex;
  std::condition_variable sessions_changed;

  Tree tree{{"/", Node{}}};
  std::uint64_t last_zxid = 0;
  struct ActiveRule {
    Rule rule;
    int seen = 0;
  };
  std::vector<ActiveRule> rules;
  std::set<std::string> down;
  std::set<std::string> refusing_moves;  // refuse_moves_to()
  bool one_address = false;              // share_one_address()
  std::map<std::string, int> server_ids;
  int next_server_id = 1;
  std::int64_t last_session = 0;
  std::vector<std::shared_ptr<Session>> sessions;
  struct DataWatch {
    std::shared_ptr<Session> session;
    std::string path;
    std::function<void(WatchNotice)> fired;
    bool children = false;  // a child watch (children_and_watch): fires when a child comes or goes
  };
  std::vector<DataWatch> watches;
  int closes_completed = 0;
  std::chrono::milliseconds close_lag{0};
  std::map<std::pair<OpKind, std::string>, int> started;

  bool reject_unknown = false;
  std::map<std::string, std::pair<std::string, bool>> refusing_sasl;  // refuse_sasl(): server, why, by it
  int opens_to_hold = 0;                                              // hold_opens()
  int opens_held = 0;
  bool opens_released = false;
  Dispatcher dispatcher;  // last: destroyed (stopped) first, with the state still whole
};

namespace {

class FakeKeeper final : public Keeper {
 public:
  FakeKeeper(std::shared_ptr<Ensemble::State> ensemble, std::shared_ptr<Session> session)
      : ensemble_(std::move(ensemble)), session_(std::move(session)) {}
  ~FakeKeeper() override {
    bool closing = false;
    {
      std::lock_guard lock(ensemble_->mutex);
      closing = session_->closing;
    }
    if (!closing) close(Clock::now() + std::chrono::seconds(2));
  }
  FakeKeeper(const FakeKeeper&) = delete;
  FakeKeeper& operator=(const FakeKeeper&) = delete;

  ZkError wait_connected(Clock::time_point deadline) override { return ensemble_->wait_connected(*session_, deadline); }
  [[nodiscard]] SessionState state() const override {
    std::lock_guard lock(ensemble_->mutex);
    return session_->closing ? SessionState::closed : session_->state;
  }
  [[nodiscard]] std::optional<std::int64_t> session_id() const override {
    std::lock_guard lock(ensemble_->mutex);
    if (session_->closing || session_->state != SessionState::connected) return std::nullopt;
    return session_->id;
  }
  [[nodiscard]] std::string connected_server() const override {
    std::lock_guard lock(ensemble_->mutex);
    return session_->closing ? std::string() : ensemble_->server_of(*session_);
  }
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const override {
    std::lock_guard lock(ensemble_->mutex);
    return session_->id != 0 ? session_->timeout : std::chrono::milliseconds(0);
  }

  void create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) override {
    start(OpKind::create, path, std::move(done), [&](State& state, CreateResult& result) {
      if (state.deny(*session_, Need::create, parent_of(path), result.error)) return false;
      result = create_node(state.tree, path, data, mode, session_->id, state.next_zxid());
      if (result.error == ZkError::ok) state.own(*session_, result.path);
      if (result.error == ZkError::ok) state.fire_watches(result.path, WatchKind::created);
      return result.error == ZkError::ok;
    });
  }
  void get(const std::string& path, Callback<GetResult> done) override {
    start(OpKind::get, path, std::move(done), [&](State& state, GetResult& result) {
      if (state.deny(*session_, Need::read, path, result.error)) return false;
      result = read_node(state.tree, path);
      return false;
    });
  }
  void set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) override {
    start(OpKind::set, path, std::move(done), [&](State& state, StatResult& result) {
      if (state.deny(*session_, Need::write, path, result.error)) return false;
      result = set_node(state.tree, path, data, version, state.next_zxid());
      if (result.error == ZkError::ok) state.fire_watches(path, WatchKind::changed);
      return result.error == ZkError::ok;
    });
  }
  void exists(const std::string& path, Callback<StatResult> done) override {
    start(OpKind::exists, path, std::move(done), [&](State& state, StatResult& result) {
      auto read = read_node(state.tree, path);
      result = {read.error, read.stat};
      return false;
    });
  }
  void children(const std::string& path, Callback<ChildrenResult> done) override {
    start(OpKind::children, path, std::move(done), [&](State& state, ChildrenResult& result) {
      if (state.deny(*session_, Need::read, path, result.error)) return false;
      result = children_of(state.tree, path);
      return false;
    });
  }
  void remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) override {
    start(OpKind::remove, path, std::move(done), [&](State& state, DoneResult& result) {
      if (state.deny(*session_, Need::remove, parent_of(path), result.error)) return false;
      result.error = remove_node(state.tree, path, version);
      if (result.error == ZkError::ok) state.fire_watches(path, WatchKind::deleted);
      return result.error == ZkError::ok;
    });
  }
  void sync(const std::string& path, Callback<DoneResult> done) override {
    start(OpKind::sync, path, std::move(done), [](State&, DoneResult& result) {
      result.error = ZkError::ok;
      return false;
    });
  }
  void multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) override {
    auto path = ops.empty() ? std::string() : ops.front().path;
    start(OpKind::multi, path, std::move(done), [&](State& state, MultiResult& result) {
      if (state.deny_multi(*session_, ops, result)) return false;
      result = apply_multi(state.tree, ops, session_->id, state.next_zxid());
      if (result.error == ZkError::ok) {
        for (const auto& op : ops) {
          if (op.kind == MultiOp::Kind::create) state.own(*session_, op.path);
          if (op.kind == MultiOp::Kind::create) state.fire_watches(op.path, WatchKind::created);
          if (op.kind == MultiOp::Kind::set) state.fire_watches(op.path, WatchKind::changed);
          if (op.kind == MultiOp::Kind::remove) state.fire_watches(op.path, WatchKind::deleted);
        }
      }
      return result.error == ZkError::ok;
    });
  }
  void children_and_watch(const std::string& path, Callback<ChildrenResult> done,
                          std::function<void(WatchNotice)> fired) override {
    start(OpKind::children, path, std::move(done), [&](State& state, ChildrenResult& result) {
      if (state.deny(*session_, Need::read, path, result.error)) return false;
      result = children_of(state.tree, path);
      if (result.error == ZkError::ok) state.watch(session_, path, std::move(fired), true);
      return false;
    });
  }
  void get_and_watch(const std::string& path, Callback<GetResult> done,
                     std::function<void(WatchNotice)> fired) override {
    start(OpKind::get, path, std::move(done), [&](State& state, GetResult& result) {
      if (state.deny(*session_, Need::read, path, result.error)) return false;
      result = read_node(state.tree, path);
      if (result.error == ZkError::ok) state.watch(session_, path, std::move(fired));
      return false;
    });
  }
  ZkError move_to(const std::string& server) override { return ensemble_->move(session_, server); }
  bool return_home() override { return ensemble_->return_home(session_); }
  [[nodiscard]] bool can_return_home() const override {
    std::lock_guard lock(ensemble_->mutex);
    ++ensemble_->started[{OpKind::can_go_home, ensemble_->server_of(*session_)}];
    return !ensemble_->one_address && !session_->closing && session_->state == SessionState::connected &&
           session_->server != 0;
  }
  bool wait_connected_to(const std::string& server, Clock::time_point deadline) const override {
    std::unique_lock lock(ensemble_->mutex);
    ensemble_->sessions_changed.wait_until(
        lock, deadline, [&] { return session_->closing || session_->state != SessionState::connecting; });
    return !session_->closing && session_->state == SessionState::connected &&
           ensemble_->server_of(*session_) == server;
  }
  [[nodiscard]] bool close_ends_session() const override { return true; }
  // A session still between servers tries the others at once, as the C client's next attempt does.
  void widen(const std::vector<std::string>& crowded) override {
    std::lock_guard lock(ensemble_->mutex);
    session_->choices = session_->servers.size();
    session_->crowded = crowded;
    bool elsewhere = false;  // as the C session: when every other server is crowded, all of them
    for (std::size_t i = session_->first_choices; i < session_->servers.size(); ++i)
      elsewhere = elsewhere || std::ranges::find(crowded, session_->servers[i].name) == crowded.end();
    if (!elsewhere) session_->crowded.clear();
    if (session_->state == SessionState::connecting && !session_->closing)
      ensemble_->connect(session_, (session_->server + 1) % session_->choices);
  }
  void get_acl(const std::string& path, Callback<AclResult> done) override {
    start(OpKind::get_acl, path, std::move(done), [&](State& state, AclResult& result) {
      result = state.acl_result(*session_, path);
      return false;
    });
  }
  [[nodiscard]] bool presents_credentials() const override {
    std::lock_guard lock(ensemble_->mutex);
    return session_->credentials.has_value();
  }
  [[nodiscard]] std::optional<SaslRefusal> sasl_refusal() const override {
    std::lock_guard lock(ensemble_->mutex);
    return session_->sasl_refusal;
  }

  bool close(Clock::time_point deadline) override { return ensemble_->close(session_, deadline); }

 private:
  using State = Ensemble::State;
  template <class R, class Apply>
  void start(OpKind op, const std::string& path, Callback<R> done, Apply apply) {
    ensemble_->start(session_, op, path, std::move(done), std::move(apply));
  }

  std::shared_ptr<Ensemble::State> ensemble_;
  std::shared_ptr<Session> session_;
};

}  // namespace

std::unique_ptr<Keeper> Ensemble::State::Factory::open(const std::vector<ServerAddress>& servers,
                                                       const probes::KeeperOptions& options,
                                                       Keeper::Listener listener) {
  {
    std::unique_lock lock(state_.mutex);
    if (state_.opens_to_hold > 0) {
      --state_.opens_to_hold;
      ++state_.opens_held;
      state_.sessions_changed.notify_all();
      state_.sessions_changed.wait_until(lock, Clock::now() + std::chrono::seconds(10),
                                         [&] { return state_.opens_released; });
      --state_.opens_held;
    }
  }
  auto session = state_.open_session(servers, options, std::move(listener));
  return std::make_unique<FakeKeeper>(state_.shared_from_this(), std::move(session));
}

void Ensemble::hold_opens(int count) {
  std::lock_guard lock(state_->mutex);
  state_->opens_to_hold = count;
  state_->opens_released = false;
}

void Ensemble::release_opens() {
  std::lock_guard lock(state_->mutex);
  state_->opens_released = true;
  state_->opens_to_hold = 0;
  state_->sessions_changed.notify_all();
}

bool Ensemble::wait_held_opens(int count, Clock::time_point deadline) const {
  std::unique_lock lock(state_->mutex);
  return state_->sessions_changed.wait_until(lock, deadline, [&] { return state_->opens_held >= count; });
}

std::shared_ptr<Session> Ensemble::State::open_session(const std::vector<ServerAddress>& servers,
                                                       const probes::KeeperOptions& options,
                                                       Keeper::Listener listener) {
  auto session = std::make_shared<Session>();
  session->servers = servers;
  session->choices = options.first_choices == 0 ? servers.size() : std::min(options.first_choices, servers.size());
  session->first_choices = session->choices;
  session->timeout = options.session_timeout;
  session->listener = std::move(listener);
  session->credentials = options.credentials;
  std::lock_guard lock(mutex);
  for (const auto& server : servers) server_id(server.name);
  sessions.push_back(session);
  connect(session, 0);
  return session;
}

// Applies an operation to the tree now (unless a fault or the session's state stops it) and
// queues its completion. `apply` fills the result and says whether it consumed a zxid.
template <class R, class Apply>
void Ensemble::State::start(const std::shared_ptr<Session>& session, OpKind op, const std::string& path,
                            Keeper::Callback<R> done, Apply apply) {
  std::lock_guard lock(mutex);
  auto server = server_of(*session);
  ++started[{op, server}];
  sessions_changed.notify_all();  // wait_for_operations
  R result;
  if (auto refused = refusal(*session)) {
    result.error = *refused;
    return complete(std::move(done), std::move(result));
  }
  auto fault = fault_for(op, server, path);
  if (fault == Fault::never_complete) {
    dispatcher.keep(std::make_shared<Keeper::Callback<R>>(std::move(done)));
    return;
  }
  if (fault == Fault::connection_loss || fault == Fault::session_expired) {
    result.error = fault == Fault::connection_loss ? ZkError::connection_loss : ZkError::session_expired;
    complete(std::move(done), std::move(result));
    if (fault == Fault::connection_loss) lose_connection(session);
    else expire(session);
    return;
  }
  if (apply(*this, result)) ++last_zxid;
  if constexpr (std::is_same_v<R, GetResult>)
    if (fault == Fault::other_bytes) result.data = result.data.empty() ? "?" : result.data.substr(1) + "?";
  complete(std::move(done), std::move(result));
}

// A session between servers answers connection_loss at once, as the C client's requests fail when
// its connection attempt does.
std::optional<ZkError> Ensemble::State::refusal(const Session& session) const {
  if (session.closing) return ZkError::closing;
  if (session.state == SessionState::auth_failed) return ZkError::auth_failed;
  if (session.state == SessionState::expired) return ZkError::session_expired;
  if (session.state != SessionState::connected) return ZkError::connection_loss;
  return std::nullopt;
}

std::string Ensemble::State::server_of(const Session& session) const {
  return session.state == SessionState::connected ? session.servers[session.server].name : std::string();
}

int Ensemble::State::server_id(const std::string& server) {
  auto [known, added] = server_ids.try_emplace(server, next_server_id);
  if (added) ++next_server_id;
  return known->second;
}

std::optional<Fault> Ensemble::State::fault_for(OpKind op, const std::string& server, const std::string& path) {
  std::optional<Fault> fault;
  for (auto& active : rules) {
    const auto& rule = active.rule;
    if (rule.op != op || (!rule.server.empty() && rule.server != server) || !path.starts_with(rule.path_prefix))
      continue;
    ++active.seen;
    if (!fault && (rule.nth == 0 || rule.nth == active.seen)) fault = rule.fault;
  }
  return fault;
}

// Tries the session's servers it may choose from `first` on, in order, skipping those down or
// refusing it.
void Ensemble::State::connect(const std::shared_ptr<Session>& session, std::size_t first, bool moving) {
  for (std::size_t attempt = 0; attempt < session->choices; ++attempt) {
    auto index = (first + attempt) % session->choices;
    const auto& name = session->servers[index].name;
    if (down.contains(name) || (moving && refusing_moves.contains(name))) continue;
    if (index >= session->first_choices && std::ranges::find(session->crowded, name) != session->crowded.end())
      continue;
    ++started[{OpKind::connect, name}];
    auto fault = fault_for(OpKind::connect, name, "");
    if (fault == Fault::connection_loss) continue;
    session->server = index;
    if (fault == Fault::never_complete) return;  // stays connecting, for ever
    if (fault == Fault::session_expired) return expire(session);
    if (auto refusing = refusing_sasl.find(name); refusing != refusing_sasl.end())
      session->sasl_refusal =
          SaslRefusal{name, "DIGEST-MD5", "zkverify", refusing->second.first, refusing->second.second};
    if (session->sasl_refusal || !accepts(session->credentials)) {  // the server closes the connection: final
      session->state = SessionState::auth_failed;
      sessions_changed.notify_all();
      announce(session, {SessionState::auth_failed, {}, {}});
      return;
    }
    if (session->id == 0)
      session->id = static_cast<std::int64_t>(static_cast<std::uint64_t>(server_id(name)) << 56) | ++last_session;
    session->state = SessionState::connected;
    sessions_changed.notify_all();
    announce(session, {SessionState::connected, name, session->timeout});
    return;
  }
}

bool Ensemble::State::deny(const Session& session, Need need, const std::string& path, ZkError& error) const {
  auto node = tree.find(path);
  if (node == tree.end() || allows(node->second, session.credentials, need)) return false;
  error = ZkError::no_auth;
  return true;
}

void Ensemble::State::own(const Session& session, const std::string& path) {
  auto node = tree.find(path);
  if (node != tree.end() && session.credentials) node->second.acl_owner = auth_data(*session.credentials);
}

bool Ensemble::State::accepts(const std::optional<Credentials>& credentials) const {
  if (!credentials || !reject_unknown) return true;
  auto presented = auth_data(*credentials);
  return std::ranges::any_of(tree, [&](const auto& entry) { return entry.second.acl_owner == presented; });
}

// getACL needs read or admin permission; the schemes only, as the keeper seam reports them.
AclResult Ensemble::State::acl_result(const Session& session, const std::string& path) const {
  AclResult result{ZkError::ok, {}};
  auto node = tree.find(path);
  if (node == tree.end()) return {ZkError::no_node, {}};
  if (deny(session, Need::read, path, result.error)) return result;
  if (node->second.acl_owner) result.schemes.emplace_back("digest");
  if (!node->second.acl_owner || node->second.world_readable) result.schemes.emplace_back("world");
  return result;
}

// Every operation of a multi is checked before any is applied: one refused fails them all.
bool Ensemble::State::deny_multi(const Session& session, const std::vector<MultiOp>& ops, MultiResult& result) const {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    bool on_parent = op.kind == MultiOp::Kind::create || op.kind == MultiOp::Kind::remove;
    auto need = op.kind == MultiOp::Kind::create   ? Need::create
                : op.kind == MultiOp::Kind::remove ? Need::remove
                : op.kind == MultiOp::Kind::set    ? Need::write
                                                   : Need::read;
    ZkError error = ZkError::ok;
    if (!deny(session, need, on_parent ? parent_of(op.path) : op.path, error)) continue;
    result.error = error;
    result.each.assign(ops.size(), ZkError::runtime_inconsistency);
    result.each[i] = error;
    return true;
  }
  return false;
}

void Ensemble::State::lose_connection(const std::shared_ptr<Session>& session) {
  session->state = SessionState::connecting;
  sessions_changed.notify_all();
  announce(session, {SessionState::connecting, {}, {}});
  post({false,
        [this, session] {
          std::lock_guard lock(mutex);
          if (session->state == SessionState::connecting && !session->closing)
            connect(session, (session->server + 1) % session->choices);
        }},
       kReconnectDelay);
}

void Ensemble::State::expire(const std::shared_ptr<Session>& session) {
  session->state = SessionState::expired;
  remove_ephemerals(session->id);
  drop_watches(session, true);
  sessions_changed.notify_all();
  announce(session, {SessionState::expired, {}, {}});
}

void Ensemble::State::remove_ephemerals(std::int64_t session) {
  if (session == 0) return;
  std::vector<std::string> removed;
  std::erase_if(tree, [&](const auto& entry) {
    if (entry.second.owner != session) return false;
    removed.push_back(entry.first);
    return true;
  });
  for (const auto& path : removed) fire_watches(path, WatchKind::deleted);  // as ZooKeeper's do
}

void Ensemble::State::watch(const std::shared_ptr<Session>& session, const std::string& path,
                            std::function<void(WatchNotice)> fired, bool children) {
  watches.push_back({session, path, std::move(fired), children});
}

// One-shot, as ZooKeeper's: each watch fires once (unless a watch rule for its session's server says
// never) and is gone. `path` changed, was created or deleted: its data watches fire with `kind`, its
// child watches when it was deleted, and its parent's child watches when it came or went.
void Ensemble::State::fire_watches(const std::string& path, WatchKind kind) {
  bool came_or_went = kind == WatchKind::created || kind == WatchKind::deleted;
  auto parent = parent_of(path);
  std::vector<std::pair<DataWatch, WatchNotice>> firing;
  std::erase_if(watches, [&](DataWatch& watch) {
    WatchNotice notice{kind, path};
    if (watch.children && came_or_went && watch.path == parent) notice = {WatchKind::children, parent};
    else if (watch.path != path || (watch.children && kind != WatchKind::deleted)) return false;
    firing.emplace_back(std::move(watch), std::move(notice));
    return true;
  });
  for (auto& [watch, notice] : firing) {
    auto server = server_of(*watch.session);
    ++started[{OpKind::watch, server}];
    if (fault_for(OpKind::watch, server, notice.path) == Fault::never_complete) continue;
    post({false, [fired = std::move(watch.fired), notice = std::move(notice)] { fired(notice); }}, dispatcher.delay());
  }
}

// A closed session's watches go silently; an expired one's report session_lost.
void Ensemble::State::drop_watches(const std::shared_ptr<Session>& session, bool notify) {
  std::erase_if(watches, [&](DataWatch& watch) {
    if (watch.session != session) return false;
    if (notify)
      post({false,
            [fired = std::move(watch.fired), path = watch.path] {
              fired(WatchNotice{WatchKind::session_lost, path});
            }},
           {});
    return true;
  });
}

// The session disconnects and, after the reconnect delay, connects to `server` (or, when that one
// is down, the next it can), keeping its id. Move rules apply to the server it leaves.
ZkError Ensemble::State::move(const std::shared_ptr<Session>& session, const std::string& server) {
  std::lock_guard lock(mutex);
  auto target = std::ranges::find_if(session->servers, [&](const auto& listed) { return listed.name == server; });
  if (target == session->servers.end()) return ZkError::bad_arguments;
  if (auto refused = refusal(*session)) return *refused;
  auto from = server_of(*session);
  ++started[{OpKind::move, from}];
  auto fault = fault_for(OpKind::move, from, "");
  if (fault == Fault::session_expired) {
    expire(session);
    return ZkError::ok;
  }
  if (fault == Fault::connection_loss) {
    lose_connection(session);
    return ZkError::ok;
  }
  session->state = SessionState::connecting;
  sessions_changed.notify_all();
  announce(session, {SessionState::connecting, {}, {}});
  if (fault == Fault::never_complete) return ZkError::ok;
  auto index = static_cast<std::size_t>(target - session->servers.begin());
  post({false,
        [this, session, index] {
          std::lock_guard relock(mutex);
          if (session->state == SessionState::connecting && !session->closing) connect(session, index, true);
        }},
       kReconnectDelay);
  return ZkError::ok;
}

// As the C session after zoo_set_servers with its first server alone: the connection drops and,
// after the reconnect delay, the session tries that server only (until widen()), keeping its id.
// Like the C client, it says only where it arrived, not that it was between servers.
bool Ensemble::State::return_home(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(mutex);
  ++started[{OpKind::home, server_of(*session)}];
  if (one_address || session->closing || session->state != SessionState::connected || session->server == 0)
    return false;
  session->choices = 1;
  session->state = SessionState::connecting;
  sessions_changed.notify_all();
  post({false,
        [this, session] {
          std::lock_guard relock(mutex);
          if (session->state == SessionState::connecting && !session->closing) connect(session, 0);
        }},
       kReconnectDelay);
  return true;
}

template <class R>
void Ensemble::State::complete(Keeper::Callback<R> done, R result) {
  post({true, [done = std::move(done), result = std::move(result)] { done(result); }}, dispatcher.delay());
}

void Ensemble::State::announce(const std::shared_ptr<Session>& session, SessionEvent event) {
  post({false, [this, session, event = std::move(event)] { deliver_event(session, event); }}, {});
}

// Calls the listener without the lock (it may call into the Keeper); close() waits for a call in
// progress, so no listener runs after close() returned.
void Ensemble::State::deliver_event(const std::shared_ptr<Session>& session, const SessionEvent& event) {
  {
    std::lock_guard lock(mutex);
    if (!session->listening || !session->listener) return;
    session->in_listener = true;
  }
  session->listener(event);
  std::lock_guard lock(mutex);
  session->in_listener = false;
  sessions_changed.notify_all();
}

ZkError Ensemble::State::wait_connected(const Session& session, Clock::time_point deadline) {
  std::unique_lock lock(mutex);
  sessions_changed.wait_until(lock, deadline,
                              [&] { return session.closing || session.state != SessionState::connecting; });
  if (session.closing) return ZkError::closing;
  switch (session.state) {
    case SessionState::connected: return ZkError::ok;
    case SessionState::expired: return ZkError::session_expired;
    case SessionState::auth_failed: return ZkError::auth_failed;
    case SessionState::closed: return ZkError::closing;
    case SessionState::connecting: return ZkError::deadline_exceeded;
  }
  return ZkError::deadline_exceeded;
}

// Completes at once (closing is the server's business, answered without the dispatcher), unless a
// never_complete rule hangs it: then it returns false at the deadline, and the session and its
// ephemerals stay, as on a server that never processed the close. Other faults do not apply.
bool Ensemble::State::close(const std::shared_ptr<Session>& session, Clock::time_point deadline) {
  std::unique_lock lock(mutex);
  session->listening = false;
  if (!dispatcher.on_its_thread()) sessions_changed.wait_until(lock, deadline, [&] { return !session->in_listener; });
  if (!session->closing) {
    session->closing = true;
    auto server = server_of(*session);
    ++started[{OpKind::close, server}];
    session->close_hangs = fault_for(OpKind::close, server, "") == Fault::never_complete;
    if (!session->close_hangs && session->state != SessionState::expired) {
      session->state = SessionState::closed;
      drop_watches(session, false);
      ++closes_completed;
      if (close_lag.count() == 0) remove_ephemerals(session->id);
      else
        post({false,
              [this, id = session->id] {
                std::lock_guard later(mutex);
                remove_ephemerals(id);
              }},
             close_lag);
    }
    sessions_changed.notify_all();
  }
  if (!session->close_hangs) return true;
  lock.unlock();
  std::this_thread::sleep_until(deadline);
  return false;
}

void Ensemble::State::expire_on(const std::string& server) {
  std::lock_guard lock(mutex);
  for (const auto& session : sessions)
    if (!session->closing && server_of(*session) == server) expire(session);
}

Ensemble::Ensemble() : state_(std::make_shared<State>()) {}

Ensemble::~Ensemble() { state_->dispatcher.stop(); }

probes::KeeperFactory& Ensemble::factory() { return state_->factory; }

void Ensemble::inject(Rule rule) {
  std::lock_guard lock(state_->mutex);
  state_->rules.push_back({std::move(rule), 0});
}

void Ensemble::set_down(const std::string& server, bool down) {
  std::lock_guard lock(state_->mutex);
  if (down) state_->down.insert(server);
  else state_->down.erase(server);
}

void Ensemble::share_one_address(bool shared) {
  std::lock_guard lock(state_->mutex);
  state_->one_address = shared;
}

void Ensemble::refuse_moves_to(const std::string& server) {
  std::lock_guard lock(state_->mutex);
  state_->refusing_moves.insert(server);
}

void Ensemble::expire_sessions_on(const std::string& server) { state_->expire_on(server); }

void Ensemble::reorder_completions(bool reorder) { state_->dispatcher.set_reorder(reorder); }

void Ensemble::delay_completions(std::chrono::milliseconds delay) { state_->dispatcher.set_delay(delay); }

void Ensemble::delay_close_effect(std::chrono::milliseconds lag) {
  std::lock_guard lock(state_->mutex);
  state_->close_lag = lag;
}

void Ensemble::set_server_id(const std::string& server, int id) {
  std::lock_guard lock(state_->mutex);
  state_->server_ids[server] = id;
}

void Ensemble::protect(const std::string& path, const Credentials& owner, bool world_readable) {
  std::lock_guard lock(state_->mutex);
  auto& node = state_->tree[path];
  node.acl_owner = auth_data(owner);
  node.world_readable = world_readable;
}

void Ensemble::refuse_sasl(const std::string& server, const std::string& why, bool by_server) {
  std::lock_guard lock(state_->mutex);
  state_->refusing_sasl[server] = {why, by_server};
}

void Ensemble::reject_unknown_credentials(bool reject) {
  std::lock_guard lock(state_->mutex);
  state_->reject_unknown = reject;
}

std::vector<std::string> Ensemble::acl_of(const std::string& path) const {
  std::lock_guard lock(state_->mutex);
  auto node = state_->tree.find(path);
  if (node == state_->tree.end()) return {};
  if (!node->second.acl_owner) return {"world:anyone"};
  const auto& owner = *node->second.acl_owner;
  std::vector<std::string> acl{"digest:" + owner.substr(0, owner.find(':'))};
  if (node->second.world_readable) acl.emplace_back("world:anyone:read");
  return acl;
}

bool Ensemble::has_node(const std::string& path) const {
  std::lock_guard lock(state_->mutex);
  return state_->tree.contains(path);
}

std::optional<std::string> Ensemble::data_of(const std::string& path) const {
  std::lock_guard lock(state_->mutex);
  auto node = state_->tree.find(path);
  if (node == state_->tree.end()) return std::nullopt;
  return node->second.data;
}

std::vector<std::string> Ensemble::paths() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::string> paths;
  for (const auto& [path, node] : state_->tree)
    if (path != "/") paths.push_back(path);
  return paths;
}

int Ensemble::sessions_opened() const {
  std::lock_guard lock(state_->mutex);
  return static_cast<int>(state_->sessions.size());
}

int Ensemble::sessions_open() const {
  std::lock_guard lock(state_->mutex);
  return static_cast<int>(std::ranges::count_if(state_->sessions, [](const auto& session) {
    return session->state != SessionState::expired && session->state != SessionState::closed;
  }));
}

int Ensemble::closes_completed() const {
  std::lock_guard lock(state_->mutex);
  return state_->closes_completed;
}

namespace {

int count_started(const Ensemble::State& state, OpKind op, const std::string& server) {
  int count = 0;
  for (const auto& [key, started_here] : state.started)
    if (key.first == op && (server.empty() || key.second == server)) count += started_here;
  return count;
}

}  // namespace

int Ensemble::operations(OpKind op, const std::string& server) const {
  std::lock_guard lock(state_->mutex);
  return count_started(*state_, op, server);
}

bool Ensemble::wait_for_operations(OpKind op, const std::string& server, int count, Clock::time_point deadline) const {
  std::unique_lock lock(state_->mutex);
  return state_->sessions_changed.wait_until(lock, deadline,
                                             [&] { return count_started(*state_, op, server) >= count; });
}

}  // namespace zkverify::fake
