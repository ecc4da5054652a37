#include "probes/watch_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <zookeeper/zookeeper.h>

namespace zkverify::probes {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

// Below this gap between two acknowledged writes nobody would call the ensemble unavailable.
milliseconds window_threshold(double rate) {
  return std::max(milliseconds(250), milliseconds(static_cast<long>(4000.0 / rate)));
}

// "host:port,host:port,...", starting at servers[first] and wrapping around.
std::string connect_string(const std::vector<ServerAddress>& servers, std::size_t first) {
  std::string hosts;
  for (std::size_t j = 0; j < servers.size(); ++j) {
    if (j) hosts += ',';
    hosts += servers[(first + j) % servers.size()].endpoint();
  }
  return hosts;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

std::string_view to_string(WatchEventKind kind) {
  switch (kind) {
    case WatchEventKind::connected: return "connected";
    case WatchEventKind::disconnected: return "disconnected";
    case WatchEventKind::reconnected: return "reconnected";
    case WatchEventKind::expired: return "session-expired";
    case WatchEventKind::ephemeral_lost: return "ephemeral-lost";
    case WatchEventKind::write_failed: return "write-failed";
    case WatchEventKind::unavailable_start: return "unavailable-start";
    case WatchEventKind::unavailable_end: return "unavailable-end";
    case WatchEventKind::read_check: return "read-check";
    case WatchEventKind::stale_read: return "stale-read";
    case WatchEventKind::read_skipped: return "read-skipped";
  }
  return "unknown";
}

struct WatchEngine::Session {
  std::string name;       // the server it prefers
  std::string ephemeral;  // its ephemeral znode
  std::string counter;    // the node its writes set, to increasing values
  std::map<long, std::int32_t> acked;  // value -> the counter's version it made
  std::int32_t last_version = -1;
  std::unique_ptr<ZkSession> zk;
  bool ever_connected = false;
  bool connected = false;
  bool expired = false;
  std::optional<Clock::time_point> lost_at;
};

WatchEngine::WatchEngine(WatchSettings settings, Sink sink) : settings_(std::move(settings)), sink_(std::move(sink)) {}

WatchEngine::~WatchEngine() { stop(); }

void WatchEngine::emit(WatchEventKind kind, const std::string& session, const std::string& server, std::string detail,
                       milliseconds duration) {
  WatchEvent event{std::chrono::system_clock::now(), duration_cast<milliseconds>(Clock::now() - started_), kind,
                   session, server, std::move(detail), duration};
  if (sink_) sink_(event);
}

std::string WatchEngine::name_of_endpoint(const std::string& endpoint) const {
  for (const auto& server : settings_.servers)
    if (server.endpoint() == endpoint) return server.name;
  return endpoint;
}

std::optional<std::string> WatchEngine::start(Clock::time_point deadline) {
  started_ = Clock::now();
  zoo_deterministic_conn_order(1);  // "its own server first, then the others, in list order"
  run_path_ = fmt::format("{}/watch/{}-{}-{}", settings_.namespace_path, host_name(), getpid(),
                          duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  totals_.run_path = run_path_;

  const auto& servers = settings_.servers;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    auto hosts = connect_string(servers, i);
    auto session = std::make_unique<Session>();
    session->name = servers[i].name;
    session->ephemeral = fmt::format("{}/session-{}", run_path_, servers[i].name);
    session->counter = fmt::format("{}/counter-{}", run_path_, servers[i].name);
    auto* raw = session.get();
    session->zk = std::make_unique<ZkSession>(
        hosts, settings_.session_timeout,
        [this, raw](int state, const std::string& server, milliseconds granted) {
          on_state(*raw, state, name_of_endpoint(server), granted);
        });
    sessions_.push_back(std::move(session));
  }
  for (auto& session : sessions_)
    if (auto error = session->zk->wait_connected(deadline); error != ZkError::ok)
      return fmt::format("session {} could not connect: {}", session->name, to_string(error));

  auto& first = *sessions_.front()->zk;
  for (const auto& path : {settings_.namespace_path, settings_.namespace_path + "/watch", run_path_}) {
    auto error = first.create(path, {}, 0, deadline);
    if (error != ZkError::ok && error != ZkError::node_exists)
      return fmt::format("cannot create {}: {}", path, to_string(error));
  }
  for (auto& session : sessions_) {
    auto error = session->zk->create(session->ephemeral, session->name, ZOO_EPHEMERAL, deadline);
    if (error == ZkError::ok) error = session->zk->create(session->counter, "0", 0, deadline);
    if (error != ZkError::ok) return fmt::format("cannot create the znodes of session {}: {}", session->name, to_string(error));
  }
  {
    std::lock_guard lock(mutex_);
    totals_.sessions = static_cast<int>(sessions_.size());
    for (auto& session : sessions_) {
      auto granted = session->zk->negotiated_timeout();
      if (totals_.negotiated_timeout == milliseconds(0) || granted < totals_.negotiated_timeout)
        totals_.negotiated_timeout = granted;
    }
  }
  writer_ = std::thread([this] { writer_loop(); });
  checker_ = std::thread([this] { checker_loop(); });
  return std::nullopt;
}

// On the C client's thread: only records and wakes the checker; blocking calls here would deadlock.
void WatchEngine::on_state(Session& session, int state, const std::string& server, milliseconds granted) {
  std::lock_guard lock(mutex_);
  if (closing_) return;  // our own close is no news
  auto now = Clock::now();
  if (state == ZOO_CONNECTED_STATE) {
    if (!session.ever_connected) {
      session.ever_connected = true;
      emit(WatchEventKind::connected, session.name, server, fmt::format("session timeout {}ms", granted.count()));
    } else if (session.lost_at) {
      auto away = duration_cast<milliseconds>(now - *session.lost_at);
      totals_.longest_disconnect = std::max(totals_.longest_disconnect, away);
      emit(WatchEventKind::reconnected, session.name, server,
           fmt::format("after {}ms (session timeout {}ms)", away.count(), totals_.negotiated_timeout.count()), away);
      ephemeral_checks_.push_back(&session);
      read_back_wanted_ = true;
      wake_checker_.notify_all();
    }
    session.connected = true;
    session.lost_at.reset();
  } else if (state == ZOO_EXPIRED_SESSION_STATE) {
    if (session.expired) return;
    session.expired = true;
    session.connected = false;
    ++totals_.sessions_expired;
    ++totals_.ephemerals_lost;
    emit(WatchEventKind::expired, session.name, "", "the server expired the session: its ephemeral znodes are gone");
    emit(WatchEventKind::ephemeral_lost, session.name, "", session.ephemeral);
  } else if (session.connected) {  // connecting or associating again
    session.connected = false;
    session.lost_at = now;
    emit(WatchEventKind::disconnected, session.name, "", "");
  }
}

void WatchEngine::writer_loop() {
  auto interval = duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / settings_.rate));
  auto next = Clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    write_one();
    lock.lock();
    auto now = Clock::now();
    if (!window_since_ && last_ack_ && now - *last_ack_ > window_threshold(settings_.rate)) {
      window_since_ = last_ack_;
      emit(WatchEventKind::unavailable_start, "", "", "",
           duration_cast<milliseconds>(now - *last_ack_));
    }
    next += interval;
    if (next < now) next = now;  // after a stall (e.g. SIGSTOP), no burst to catch up
    wake_checker_.wait_until(lock, next, [&] { return stopping_; });
  }
}

void WatchEngine::write_one() {
  Session* session = nullptr;
  long value = 0;
  {
    std::lock_guard lock(mutex_);
    value = ++next_value_;
    // Through the sessions in turn; an expired session writes no more.
    for (std::size_t i = 0; i < sessions_.size() && !session; ++i) {
      auto& candidate = *sessions_[static_cast<std::size_t>(value + static_cast<long>(i)) % sessions_.size()];
      if (!candidate.expired) session = &candidate;
    }
    if (!session) return;
    ++totals_.writes_attempted;
    in_flight_[value] = Clock::now();
  }
  session->zk->set_async(session->counter, std::to_string(value), [this, session, value](ZkError error, std::int32_t version) {
    on_write_done(*session, value, error, version);
  });
}

void WatchEngine::on_write_done(Session& session, long value, ZkError error, std::int32_t version) {
  std::lock_guard lock(mutex_);
  in_flight_.erase(value);
  auto now = Clock::now();
  if (error != ZkError::ok) {
    ++totals_.writes_failed;
    if (!window_reported_) {
      window_reported_ = true;
      emit(WatchEventKind::write_failed, "", "", fmt::format("write {} failed: {}", value, to_string(error)));
    }
    return;
  }
  ++totals_.writes_acked;
  session.acked[value] = version;
  // One client's writes are applied in the order it sent them: each must move its counter forward.
  if (version <= session.last_version) {
    ++totals_.writes_out_of_order;
    emit(WatchEventKind::stale_read, session.name, "",
         fmt::format("write {} was applied as version {}, after version {}", value, version, session.last_version));
  }
  session.last_version = std::max(session.last_version, version);
  if (last_ack_) {
    auto gap = duration_cast<milliseconds>(now - *last_ack_);
    totals_.longest_unavailable = std::max(totals_.longest_unavailable, gap);
    if (window_since_)
      emit(WatchEventKind::unavailable_end, "", "", fmt::format("writes succeed again after {}ms", gap.count()), gap);
  }
  window_since_.reset();
  window_reported_ = false;
  last_ack_ = now;
}

void WatchEngine::checker_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_checker_.wait(lock, [&] { return stopping_ || read_back_wanted_ || !ephemeral_checks_.empty(); });
    if (stopping_) break;
    auto checks = std::exchange(ephemeral_checks_, {});
    bool read_back = std::exchange(read_back_wanted_, false);
    lock.unlock();
    for (auto* session : checks) {
      auto error = session->zk->exists(session->ephemeral, Clock::now() + settings_.request_timeout);
      if (error == ZkError::no_node) {
        std::lock_guard relock(mutex_);
        ++totals_.ephemerals_lost;
        emit(WatchEventKind::ephemeral_lost, session->name, "", session->ephemeral);
      }
    }
    if (read_back) read_back_everywhere(false);
    std::this_thread::sleep_for(milliseconds(500));  // at most two read-backs a second, whatever flaps
    lock.lock();
  }
}

// Through a fresh session pinned to each server: sync, read every session's counter, and check that
// it holds at least the last value that session had acknowledged before the read began. The history
// is linear, so that value being there means every earlier acknowledged write of the session is too.
void WatchEngine::read_back_everywhere(bool final) {
  std::vector<std::unique_ptr<ZkSession>> pinned;
  for (const auto& server : settings_.servers)
    pinned.push_back(std::make_unique<ZkSession>(server.endpoint(), settings_.session_timeout));
  std::vector<std::string> counters;
  for (const auto& session : sessions_) counters.push_back(session->counter);

  long most_lost = 0;
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    const auto& name = settings_.servers[i].name;
    auto deadline = Clock::now() + settings_.request_timeout;
    auto error = pinned[i]->wait_connected(deadline);
    std::vector<std::vector<long>> expected(sessions_.size());  // acknowledged before this read began
    std::vector<NodeRead> values(sessions_.size());
    if (error == ZkError::ok) {
      {
        std::lock_guard lock(mutex_);
        for (std::size_t s = 0; s < sessions_.size(); ++s)
          for (const auto& [value, version] : sessions_[s]->acked) expected[s].push_back(value);
      }
      auto reads = pinned[i]->start_sync_and_read(run_path_, counters);
      for (std::size_t s = 0; s < reads.size() && error == ZkError::ok; ++s)
        error = pinned[i]->await_read(reads[s], deadline, values[s]);
    }
    std::lock_guard lock(mutex_);
    if (error != ZkError::ok) {
      emit(WatchEventKind::read_skipped, "", name, fmt::format("read-back not possible: {}", to_string(error)));
      continue;
    }
    long missing = 0, total = 0;
    std::string first_missing;
    for (std::size_t s = 0; s < sessions_.size(); ++s) {
      long present = 0;
      std::from_chars(values[s].data.data(), values[s].data.data() + values[s].data.size(), present);
      for (long value : expected[s]) {
        ++total;
        if (value <= present) continue;
        if (first_missing.empty()) first_missing = fmt::format("write {} of session {}", value, sessions_[s]->name);
        ++missing;
      }
    }
    ++totals_.read_checks;
    most_lost = std::max(most_lost, missing);
    if (missing == 0) {
      emit(WatchEventKind::read_check, "", name,
           fmt::format("{} acknowledged writes present{}", total, final ? " (final)" : ""));
    } else {
      ++totals_.stale_reads;
      emit(WatchEventKind::stale_read, "", name,
           fmt::format("{} of {} acknowledged writes missing after sync (first: {})", missing, total, first_missing));
    }
  }
  std::lock_guard lock(mutex_);
  if (final) totals_.writes_lost = most_lost;
}

void WatchEngine::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    wake_checker_.notify_all();
  }
  bool was_running = writer_.joinable();
  if (writer_.joinable()) writer_.join();
  if (checker_.joinable()) checker_.join();
  if (sessions_.empty()) return;
  if (was_running) finish_run();
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  sessions_.clear();  // closing: the server deletes the ephemerals
  remove_run_node();
}

void WatchEngine::finish_run() {
  // Writes still in flight get a moment to be acknowledged (or fail) before the final count.
  auto settle = Clock::now() + settings_.request_timeout;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.empty() || Clock::now() > settle) break;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  {
    std::lock_guard lock(mutex_);
    if (last_ack_) {  // a window still open at the end counts up to now
      auto gap = duration_cast<milliseconds>(Clock::now() - *last_ack_);
      if (window_since_) totals_.longest_unavailable = std::max(totals_.longest_unavailable, gap);
    }
  }
  for (auto& session : sessions_) {
    if (session->expired) continue;
    if (session->zk->exists(session->ephemeral, Clock::now() + settings_.request_timeout) == ZkError::no_node) {
      std::lock_guard lock(mutex_);
      ++totals_.ephemerals_lost;
      emit(WatchEventKind::ephemeral_lost, session->name, "", session->ephemeral);
    }
  }
  read_back_everywhere(true);

  // The counters go now, the ephemerals with their sessions, the run's node after them.
  std::vector<std::string> counters;
  for (const auto& session : sessions_) counters.push_back(session->counter);
  for (auto& session : sessions_) {
    if (session->expired) continue;
    if (session->zk->remove_all(counters, Clock::now() + settings_.request_timeout) == ZkError::ok) break;
  }
}

void WatchEngine::remove_run_node() {
  ZkSession cleaner(connect_string(settings_.servers, 0), settings_.session_timeout);
  auto deadline = Clock::now() + settings_.request_timeout;
  if (cleaner.wait_connected(deadline) == ZkError::ok) {
    cleaner.remove(run_path_, deadline);
    cleaner.remove(settings_.namespace_path + "/watch", deadline);  // fails harmlessly while another watch runs
  }
}

WatchTotals WatchEngine::totals() const {
  std::lock_guard lock(mutex_);
  return totals_;
}

}  // namespace zkverify::probes
