#include "probes/c_session.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <random>
#include <utility>

namespace zkverify::probes::c_client {

namespace {

// The watcher of a handle the session moved away from: its events are no longer the session's.
void ignore_event(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/, void* /*context*/) {}

// The peer of `zh`'s connection, read on the client's thread while the handle is valid.
std::optional<boost::asio::ip::tcp::endpoint> peer_of(zhandle_t* zh) {
  boost::asio::ip::tcp::endpoint peer;
  auto length = static_cast<socklen_t>(peer.capacity());
  if (!zookeeper_get_connected_host(zh, peer.data(), &length)) return std::nullopt;
  peer.resize(length);
  return peer;
}

zhandle_t* init_handle(const std::string& hosts, int timeout_ms, const clientid_t* session, void* context, int flags) {
  auto* zh = zookeeper_init(hosts.c_str(), &CSession::on_event, timeout_ms, session, context, flags);
  // By default the client looks the names up again on every I/O loop. -1: only while it has no
  // connection, i.e. for each attempt to reconnect, where a server's new address is found.
  if (zh) zoo_set_servers_resolution_delay(zh, -1);
  return zh;
}

// Right after zookeeper_init, before any operation: the client sends the credentials first on every
// connection (ahead of queued requests) and calls on_auth once with the server's answer.
void add_credentials(zhandle_t* zh, const std::optional<Credentials>& credentials, CSession* session) {
  if (!credentials) return;
  auto data = auth_data(*credentials);
  int rc = zoo_add_auth(zh, credentials->scheme.c_str(), data.data(), static_cast<int>(data.size()), &CSession::on_auth,
                        session);
  if (rc != ZOK) CSession::on_auth(ZAUTHFAILED, session);
}

// The servers the handle is given first: its first choices, shuffled unless asked in order.
std::string first_hosts(const std::vector<KnownServer>& servers, const KeeperOptions& options) {
  auto choices = options.first_choices == 0 ? servers.size() : std::min(options.first_choices, servers.size());
  std::vector<KnownServer> first(servers.begin(), servers.begin() + static_cast<std::ptrdiff_t>(choices));
  if (!options.in_order && first.size() > 1) {
    std::mt19937 random{std::random_device{}()};
    std::ranges::shuffle(first, random);
  }
  return connect_string(first);
}

}  // namespace

CSession::CSession(Executor& executor, Keeper::Listener listener, KeeperOptions options, int init_flags)
    : ActorCore(executor), listener_(std::move(listener)), options_(std::move(options)), init_flags_(init_flags) {}

std::shared_ptr<CSession> CSession::self() { return std::static_pointer_cast<CSession>(shared_from_this()); }

void CSession::on_event(zhandle_t* zh, int type, int state, const char* /*path*/, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto session = static_cast<CSession*>(context)->self();
  Event event{zh, session_state_of(state), std::nullopt, {}, std::chrono::milliseconds(0)};
  if (event.state == SessionState::connected) {
    event.peer = peer_of(zh);
    // Here, on the client's thread, where a lookup may block: the peer may be a listed name's new
    // address, which the strand must not wait to look up.
    if (event.peer) event.server = listed_name(session->servers_, *event.peer, look_up_now);
    event.granted = std::chrono::milliseconds(zoo_recv_timeout(zh));
  }
  tell(session, [event](CSession& self) { self.event(event); });
}

void CSession::on_auth(int rc, const void* context) {
  auto session = static_cast<CSession*>(const_cast<void*>(context))->self();
  tell(session, [rc](CSession& self) { self.authenticated(rc); });
}

void CSession::on_watch(zhandle_t* /*zh*/, int type, int state, const char* path, void* context) {
  auto kind = watch_kind_of(type, state);
  if (!kind) return;
  auto& slot = *static_cast<WatchSlot*>(context);
  if (!slot.delivered.test_and_set()) slot.fired(WatchNotice{*kind, path ? path : ""});
}

// zookeeper_init on a worker (it takes a millisecond or more, and handles open concurrently). The
// credentials are added there too, right after it: before any request can be queued.
void CSession::open(const std::vector<ServerAddress>& servers, std::vector<Resolution> found) {
  if (closing_) return;
  servers_ = known_servers(servers, std::move(found));
  if (!servers.empty()) home_ = servers.front().name;
  if (servers_.empty()) {
    open_failed_ = true;
    submit_waiting();
    return resolve_waiters();
  }
  narrow_ = options_.first_choices != 0 && options_.first_choices < servers_.size();
  auth_pending_ = options_.credentials.has_value();
  opening_ = true;
  auto hosts = first_hosts(servers_, options_);
  auto timeout = static_cast<int>(options_.session_timeout.count());
  offload(
      self(),
      [hosts, timeout, credentials = options_.credentials, session = this, flags = init_flags_] {
        auto* zh = init_handle(hosts, timeout, nullptr, session, flags);
        if (zh) add_credentials(zh, credentials, session);
        return zh;
      },
      [](CSession& self, zhandle_t* zh) { self.opened(zh); });
}

void CSession::opened(zhandle_t* handle) {
  opening_ = false;
  if (closing_) {  // closed while it opened: the new handle goes, and with it the close's wait
    std::vector<zhandle_t*> handles;
    if (handle) handles.push_back(handle);
    return close_handles(std::move(handles));
  }
  handle_ = handle;
  if (!handle_) open_failed_ = true;
  submit_waiting();
  release_held();
  resolve_waiters();
}

// A refusal is final (the client closes the connection and its watcher reports
// ZOO_AUTH_FAILED_STATE as well). The answer can come before opened(): the client's threads run
// as soon as zookeeper_init has started them.
void CSession::authenticated(int rc) {
  auth_pending_ = false;
  if (rc != ZOK && state_ != SessionState::closed) {
    held_.reset();
    publish(SessionEvent{SessionState::auth_failed, {}, {}});
  }
  release_held();
  resolve_waiters();
}

// The connected event held back by event() is announced once the session is usable, so a listener
// waiting for that (the round trip's) hears it when a request can be sent.
void CSession::release_held() {
  if (held_ && usable()) publish(*std::exchange(held_, std::nullopt));
}

void CSession::event(const Event& event) {
  // A retired handle's events, sent before its watcher was silenced, are not the session's.
  if (state_ == SessionState::closed || std::ranges::find(retired_, event.handle) != retired_.end()) return;
  SessionEvent announced{event.state, {}, {}};
  if (event.state == SessionState::connected) {
    announced.server = event.server;
    announced.granted_timeout = event.granted;
  }
  set_state(event.state);
  connected_to_ = event.state == SessionState::connected ? announced.server : std::string();
  held_.reset();  // a later event makes a held connected one stale
  // The client's threads can connect before zookeeper_init has returned on its worker, i.e. before
  // opened() has the handle; a listener told "connected" then would send requests that wait for it.
  if (event.state == SessionState::connected && !usable()) held_ = announced;  // see release_held()
  else publish(announced);
  resolve_waiters();
}

void CSession::publish(const SessionEvent& event) {
  if (event.state == SessionState::auth_failed) set_state(SessionState::auth_failed);
  if (listener_) listener_(event);
}

// No lookup on the strand: an address that is not one the names had at the open is the last
// connected event's server, which on_event looked up.
std::string CSession::name_of(const std::optional<boost::asio::ip::tcp::endpoint>& peer) const {
  if (!peer) return {};
  auto name = listed_name(servers_, *peer, [](const std::string&) { return Resolution{}; });
  bool listed = std::ranges::any_of(servers_, [&name](const KnownServer& server) { return server.name == name; });
  return listed || connected_to_.empty() ? name : connected_to_;
}

void CSession::resolve_waiters() {
  bool final = state_ == SessionState::expired || state_ == SessionState::auth_failed ||
               state_ == SessionState::closed || open_failed_;
  if (usable() || final) {
    ZkError outcome = ZkError::ok;
    if (state_ == SessionState::expired) outcome = ZkError::session_expired;
    else if (state_ == SessionState::auth_failed) outcome = ZkError::auth_failed;
    else if (state_ == SessionState::closed) outcome = ZkError::closing;
    else if (!usable()) outcome = ZkError::system_error;
    for (auto& waiter : connected_waiters_) waiter.set_value(outcome);
    connected_waiters_.clear();
  }
  std::erase_if(connected_to_waiters_, [&](auto& waiter) {
    if (!usable() && !final) return false;
    waiter.second.set_value(usable() && connected_to_ == waiter.first);
    return true;
  });
}

WatchSlot* CSession::keep_watch(std::function<void(WatchNotice)> fired) {
  watches_.push_back(std::make_unique<WatchSlot>());
  watches_.back()->fired = std::move(fired);
  return watches_.back().get();
}

std::optional<std::int64_t> CSession::session_id() const {
  if (!handle_ || state_ != SessionState::connected) return std::nullopt;
  return zoo_client_id(handle_)->client_id;
}

std::string CSession::connected_server() const { return handle_ ? name_of(peer_of(handle_)) : std::string(); }

std::chrono::milliseconds CSession::negotiated_timeout() const {
  if (!handle_ || state_ != SessionState::connected) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(zoo_recv_timeout(handle_));
}

std::shared_future<ZkError> CSession::when_connected() {
  std::promise<ZkError> waiter;
  std::shared_future<ZkError> outcome = waiter.get_future().share();
  connected_waiters_.push_back(std::move(waiter));
  resolve_waiters();
  return outcome;
}

std::shared_future<bool> CSession::when_connected_to(const std::string& name) {
  std::promise<bool> waiter;
  std::shared_future<bool> outcome = waiter.get_future().share();
  connected_to_waiters_.emplace_back(name, std::move(waiter));
  resolve_waiters();
  return outcome;
}

// zoo_set_servers takes effect at the next connection attempt: the client is between servers when
// the watch widens a session (ZooKeeper's rebalancing only moves a connected one).
// The crowded servers (each already holds two of the watch's sessions) are left out: one more there
// and a server with maxClientCnxns=3 refuses the checks beside the watch for as long as it runs.
// Unless every other server is crowded (no quorum serves then): a third session beats an expired one.
void CSession::widen(const std::vector<std::string>& crowded) {
  if (closing_ || !handle_ || !narrow_) return;
  std::vector<KnownServer> wide;
  for (std::size_t i = 0; i < servers_.size(); ++i)
    if (i < options_.first_choices || std::ranges::find(crowded, servers_[i].name) == crowded.end())
      wide.push_back(servers_[i]);
  if (wide.size() == options_.first_choices) wide = servers_;
  if (zoo_set_servers(handle_, connect_string(wide).c_str()) == ZOK) narrow_ = false;
}

// zoo_set_servers with a list that lacks the connected server's address drops the connection and
// resumes the session on the new list (the client's rebalancing). The list is the own server alone:
// a list that kept the current one would let the client stay, and one with others could send it
// anywhere. Its address is compared as the client does (addresses, not ports).
bool CSession::return_home() {
  if (!can_return_home() || zoo_set_servers(handle_, connect_string({servers_.front()}).c_str()) != ZOK) return false;
  narrow_ = true;  // widen() may open it up again
  return true;
}

bool CSession::can_return_home() const {
  if (closing_ || !usable() || servers_.empty() || servers_.front().name != home_) return false;
  const auto& home = servers_.front();
  auto peer = peer_of(handle_);
  return peer && std::ranges::find(home.addresses, peer->address()) == home.addresses.end();
}

// The C client cannot move a session on its own here: zoo_set_servers keeps the connection when
// the connected server's IP is in the new list (addrvec_contains compares addresses, not ports:
// every server of a loopback ensemble matches), and zoo_cycle_next_server only picks the next
// attempt. So a second handle resumes the session (its id and password) on the target, as a client
// reconnecting elsewhere does, and the old handle is retired: its watcher silenced, closed only
// after the session (a close through it first would end the session). The new handle is made here,
// on the strand, so that no request can reach the old one after the move began.
ZkError CSession::move_to(const std::string& name) {
  std::vector<KnownServer> matching;
  for (const auto& server : servers_)
    if (server.name == name) matching.push_back(server);
  if (matching.empty()) return ZkError::bad_arguments;
  if (closing_) return ZkError::closing;
  if (!handle_ || state_ != SessionState::connected) return ZkError::connection_loss;
  clientid_t session = *zoo_client_id(handle_);
  zoo_set_watcher(handle_, &ignore_event);
  auto* moved = init_handle(connect_string(matching), zoo_recv_timeout(handle_), &session, this, init_flags_);
  if (!moved) {
    zoo_set_watcher(handle_, &CSession::on_event);
    return ZkError::system_error;
  }
  set_state(SessionState::connecting);  // until the new handle reports connected
  if (options_.credentials) auth_pending_ = true;
  add_credentials(moved, options_.credentials, this);  // credentials belong to a connection, not the session
  retired_.push_back(std::exchange(handle_, moved));
  return ZkError::ok;
}

// From now on the state stays `closed` and the listener is not called. zookeeper_close can block
// for seconds (closing a session is a quorum transaction), so it runs on a worker; the session is
// closed first, then each retired handle, whose server has dropped its connection by then, so
// closing it sends nothing that could end a session.
void CSession::close(std::promise<void> done) {
  if (close_done_) return done.set_value();
  close_waiters_.push_back(std::move(done));
  if (closing_) return;
  closing_ = true;
  set_state(SessionState::closed);
  resolve_waiters();
  submit_waiting();
  std::vector<zhandle_t*> handles;
  if (handle_) handles.push_back(std::exchange(handle_, nullptr));
  for (auto* old : std::exchange(retired_, {})) handles.push_back(old);
  // While zookeeper_init runs there is no handle yet: opened() closes the one it makes.
  if (!opening_) close_handles(std::move(handles));
}

void CSession::close_handles(std::vector<zhandle_t*> handles) {
  offload(
      self(),
      [handles = std::move(handles)] {
        for (auto* handle : handles) zookeeper_close(handle);
      },
      [](CSession& self) {
        self.close_done_ = true;
        for (auto& waiter : self.close_waiters_) waiter.set_value();
        self.close_waiters_.clear();
      });
}

}  // namespace zkverify::probes::c_client
