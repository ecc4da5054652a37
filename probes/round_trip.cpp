#include "probes/round_trip.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <mutex>
#include <utility>

#include "probes/client_reads.hpp"
#include "probes/pinned_reads.hpp"

namespace zkverify::probes {

namespace {

// The sessions' state changes, as a future per change: the round trip sleeps until some session
// connects (or fails) rather than waiting for the sessions one after another. The lock is a leaf
// (ARCHITECTURE.md, "Locks"): it guards the next change's promise; the promise is kept outside it.
class StateChanges {
 public:
  // From a session's listener (the C client's thread): the change that next() promised came.
  void count() {
    std::promise<void> came;
    {
      std::lock_guard lock(mutex_);
      came = std::exchange(next_, {});
      next_future_ = next_.get_future().share();
    }
    came.set_value();
  }
  // Ready once a change after this call came.
  [[nodiscard]] std::shared_future<void> next() const {
    std::lock_guard lock(mutex_);
    return next_future_;
  }

 private:
  mutable std::mutex mutex_;
  std::promise<void> next_;
  std::shared_future<void> next_future_ = next_.get_future().share();
};

// One session's sync and the reads queued behind it: the probe node (when the plan writes one), then
// the durability marker (when the plan names one).
struct PendingReads {
  PendingReads(Keeper& session, const RoundTripPlan& plan, const RoundTrip& trip)
      : reads(session, plan.namespace_path, paths_of(plan, trip)) {}
  static std::vector<std::string> paths_of(const RoundTripPlan& plan, const RoundTrip& trip) {
    std::vector<std::string> paths;
    if (plan.write) paths.push_back(trip.path);
    if (!plan.marker_path.empty()) paths.push_back(plan.marker_path);
    return paths;
  }
  SyncedReads reads;
};

// A session pinned to `server` whose state changes wake the round trip.
std::unique_ptr<Keeper> open_pinned(KeeperFactory& keepers, const ServerAddress& server,
                                    std::chrono::milliseconds session_timeout,
                                    const std::shared_ptr<StateChanges>& changes) {
  KeeperOptions options;
  options.session_timeout = session_timeout;
  auto pinned = probes::open_pinned(keepers, {server}, options, [changes](const SessionEvent&) { changes->count(); });
  return std::move(pinned.front());
}

}  // namespace

struct SessionsAhead::State {
  KeeperFactory& keepers;
  std::chrono::milliseconds session_timeout;
  std::shared_ptr<StateChanges> changes = std::make_shared<StateChanges>();
  std::map<std::string, std::unique_ptr<Keeper>> sessions{};  // by server name; taken by the round trip
};

SessionsAhead::SessionsAhead(KeeperFactory& keepers, std::chrono::milliseconds session_timeout)
    : state_(std::make_unique<State>(State{keepers, session_timeout})) {}

SessionsAhead::~SessionsAhead() = default;  // each Keeper's destructor closes it if nobody did

void SessionsAhead::open(const ServerAddress& server) {
  auto& session = state_->sessions[server.name];
  if (!session) session = open_pinned(state_->keepers, server, state_->session_timeout, state_->changes);
}

bool joins_round_trip(const ServerProbe& probe) {
  auto mode = mode_of(probe);
  return mode && is_serving(*mode);
}

namespace {

// One session per planned server: the one opened ahead for it, else a new one. Sessions opened
// ahead for servers the plan left out go to `unused`, to be closed with the others.
std::vector<std::unique_ptr<Keeper>> open_sessions(const RoundTripPlan& plan, KeeperFactory& keepers,
                                                   const std::shared_ptr<StateChanges>& changes,
                                                   SessionsAhead::State* ahead,
                                                   std::vector<std::unique_ptr<Keeper>>& unused) {
  std::vector<std::unique_ptr<Keeper>> sessions;
  for (const auto& server : plan.servers) {
    std::unique_ptr<Keeper> session;
    if (ahead) {
      if (auto found = ahead->sessions.find(server.name); found != ahead->sessions.end())
        session = std::move(found->second);
    }
    sessions.push_back(session ? std::move(session) : open_pinned(keepers, server, plan.session_timeout, changes));
  }
  if (ahead)
    for (auto& [name, session] : ahead->sessions)
      if (session) unused.push_back(std::move(session));
  return sessions;
}

// The node whose ACL decides over creating `path`: its parent.
std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// Keeps the first node whose ACL answered no_auth: the one the judge names.
void note_denied(RoundTrip& trip, ZkError error, const std::string& path) {
  if (error == ZkError::no_auth && trip.denied_path.empty()) trip.denied_path = path;
}

// Creates the namespace node (node_exists is fine: another run may create it meanwhile).
bool create_namespace(Keeper& writer, const RoundTripPlan& plan, RoundTrip& trip) {
  trip.namespace_error = create_now(writer, plan.namespace_path, {}, CreateMode::persistent, plan.deadline).error;
  if (trip.namespace_error == ZkError::node_exists) trip.namespace_error = ZkError::ok;
  note_denied(trip, trip.namespace_error, parent_of(plan.namespace_path));
  return trip.namespace_error == ZkError::ok;
}

// Creates a node under the namespace. The namespace is there after the first run, so the node is
// created first and the namespace only when that answers no_node (then the node again): asking
// whether it exists would cost every run a round trip, creating it anyway a quorum transaction.
CreateResult create_in_namespace(Keeper& writer, const RoundTripPlan& plan, RoundTrip& trip, const std::string& path,
                                 const std::string& data, CreateMode mode) {
  auto created = create_now(writer, path, data, mode, plan.deadline);
  if (created.error == ZkError::no_node && trip.namespace_error == ZkError::not_attempted) {
    if (!create_namespace(writer, plan, trip)) return {ZkError::not_attempted, {}, {}};
    created = create_now(writer, path, data, mode, plan.deadline);
  }
  // These answers come from a namespace that is there (a missing parent answers no_node first).
  if (created.error == ZkError::ok || created.error == ZkError::node_exists || created.error == ZkError::no_auth)
    trip.namespace_error = ZkError::ok;
  return created;
}

// Creates the marker (if asked and missing) and the probe node through the writer, and the
// namespace if missing. Returns false when the reads have nothing to look for.
bool write_through(Keeper& writer, const RoundTripPlan& plan, RoundTrip& trip) {
  if (plan.marker_content) {
    trip.marker_create_error =
        create_in_namespace(writer, plan, trip, plan.marker_path, *plan.marker_content, CreateMode::persistent).error;
    if (trip.namespace_error != ZkError::ok && trip.namespace_error != ZkError::not_attempted) return false;
    note_denied(trip, trip.marker_create_error, parent_of(plan.marker_path));
  }
  if (!plan.write) return !plan.marker_path.empty();

  auto probe = create_in_namespace(writer, plan, trip, plan.namespace_path + std::string(kRoundTripPrefix),
                                   plan.payload, CreateMode::ephemeral_sequential);
  if (trip.namespace_error != ZkError::ok && trip.namespace_error != ZkError::not_attempted) return false;
  trip.write_error = probe.error;
  note_denied(trip, probe.error, plan.namespace_path);
  if (probe.error != ZkError::ok) return false;
  trip.path = probe.path;
  trip.write_zxid = probe.stat.czxid;
  return true;
}

// Starts each session's reads as soon as it is connected, in whatever order the sessions connect,
// so a session that never connects costs only its own read (deadline_exceeded); one that expired
// or was refused gets its error.
std::vector<std::optional<PendingReads>> start_reads_when_connected(std::vector<std::unique_ptr<Keeper>>& sessions,
                                                                    const RoundTripPlan& plan, RoundTrip& trip,
                                                                    StateChanges& changes) {
  std::vector<std::optional<PendingReads>> pending(sessions.size());
  std::vector<bool> settled(sessions.size(), false);
  for (;;) {
    auto changed = changes.next();
    bool connecting = false;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      if (settled[i]) continue;
      auto& read = trip.reads[i];
      read.error = sessions[i]->wait_connected(Clock::now());  // the outcome so far, without waiting
      if (read.error == ZkError::deadline_exceeded) {
        connecting = true;
        continue;
      }
      settled[i] = true;
      read.session_server_id = creator_id(*sessions[i]);
      if (read.error == ZkError::ok) pending[i].emplace(*sessions[i], plan, trip);
    }
    if (!connecting || Clock::now() >= plan.deadline) return pending;
    changed.wait_until(plan.deadline);
  }
}

// Awaits one session's sync and reads and records them (a failed sync is every read's error).
void collect_reads(PendingReads& pending, const RoundTripPlan& plan, ReadBack& read, std::vector<TimedStep>& steps) {
  auto reads = pending.reads.await(plan.deadline);
  auto last = pending.reads.started();
  for (const auto& one : reads) last = std::max(last, one.completed);
  steps.push_back({read.server, "session: sync and read", pending.reads.started(), last});
  std::size_t next = 0;
  if (plan.write) {
    const auto& probe = reads[next++];
    read.error = probe.result.error;
    read.latency = std::chrono::duration_cast<std::chrono::microseconds>(probe.completed - pending.reads.started());
    if (read.error == ZkError::ok) {
      read.bytes_match = probe.result.data == plan.payload;
      read.read_mzxid = probe.result.stat.mzxid;
    }
  }
  if (!plan.marker_path.empty()) {
    auto& marker = reads[next];
    read.marker_error = marker.result.error;
    // Without a write the marker is the read: a missing marker is a fact for the ledger, not an error.
    if (!plan.write) read.error = read.marker_error == ZkError::no_node ? ZkError::ok : read.marker_error;
    if (read.marker_error == ZkError::ok) {
      read.marker_czxid = marker.result.stat.czxid;
      read.marker_data = std::move(marker.result.data);
    }
  }
}

// Starts closing a session without waiting for the close (close_all waits for it later: a close
// is idempotent, and a second call waits for the first).
void start_closing(Keeper& session) { session.close(Clock::now()); }

// Time since `since`, and restarts it: one phase of the round trip ends where the next begins.
std::chrono::microseconds lap(Clock::time_point& since) {
  auto now = Clock::now();
  return std::chrono::duration_cast<std::chrono::microseconds>(now - std::exchange(since, now));
}

void write_and_read(std::vector<std::unique_ptr<Keeper>>& sessions, const RoundTripPlan& plan, RoundTrip& trip,
                    StateChanges& changes) {
  auto& writer = *sessions[plan.writer];
  auto phase_started = Clock::now();
  auto connected = writer.wait_connected(plan.deadline);
  trip.steps.push_back({trip.writer, "session: writer connected", phase_started, Clock::now()});
  trip.timings.connect = lap(phase_started);
  if (connected != ZkError::ok) {
    if (plan.write) trip.write_error = connected;
    else trip.reads[plan.writer].error = connected;
    return;
  }
  bool written = write_through(writer, plan, trip);
  trip.steps.push_back({trip.writer, "session: write", phase_started, Clock::now()});
  trip.timings.write = lap(phase_started);
  if (!written) return;

  auto pending = start_reads_when_connected(sessions, plan, trip, changes);
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (pending[i]) collect_reads(*pending[i], plan, trip.reads[i], trip.steps);
    // A reader is done once its reads are in: its close (a quorum transaction) starts now, beside
    // the other reads and the writer's delete; run_round_trip's close_all then waits for it.
    if (i != plan.writer) start_closing(*sessions[i]);
  }
  if (!plan.client_paths.empty()) {
    auto started = Clock::now();
    trip.clients = read_client_paths(writer, plan.client_paths, plan.deadline);
    trip.steps.push_back({trip.writer, "session: clients' registrations", started, Clock::now()});
  }
  for (const auto& read : trip.reads) {
    if (plan.write) note_denied(trip, read.error, trip.path);
    note_denied(trip, read.marker_error, plan.marker_path);
  }
  trip.timings.read_back = lap(phase_started);
  // The probe node is ephemeral, so the writer's close removes it, in a quorum transaction every
  // session needs anyway: no delete, unless the writer outlives its close (a lent session). The
  // writer stays open only to read the ACL that refused something.
  if (!writer.close_ends_session()) {
    if (plan.write) trip.removal_error = remove_now(writer, trip.path, plan.deadline);
  } else if (trip.denied_path.empty()) {
    start_closing(writer);
  }
  trip.timings.cleanup = lap(phase_started);
}

// The schemes of the ACL that refused the writer, read through it (only the schemes: ids can hold
// password hashes). Reading an ACL needs read or admin permission, so it may be refused too.
void read_denied_acl(Keeper& writer, const RoundTripPlan& plan, RoundTrip& trip) {
  if (trip.denied_path.empty()) return;
  auto acl = get_acl_now(writer, trip.denied_path, plan.deadline);
  trip.acl_error = acl.error;
  trip.acl_schemes = std::move(acl.schemes);
}

}  // namespace

RoundTrip run_round_trip(const RoundTripPlan& plan, KeeperFactory& keepers, SessionsAhead* ahead) {
  RoundTrip trip;
  if (plan.servers.empty() || plan.writer >= plan.servers.size()) return trip;
  trip.writer = plan.servers[plan.writer].name;
  trip.marker_path = plan.marker_path;
  trip.reads.resize(plan.servers.size());
  for (std::size_t i = 0; i < plan.servers.size(); ++i) trip.reads[i].server = plan.servers[i].name;

  auto changes = ahead ? ahead->state().changes : std::make_shared<StateChanges>();
  std::vector<std::unique_ptr<Keeper>> unused;
  auto sessions = open_sessions(plan, keepers, changes, ahead ? &ahead->state() : nullptr, unused);
  trip.namespace_path = plan.namespace_path;
  trip.credentials_given = sessions[plan.writer]->presents_credentials();
  write_and_read(sessions, plan, trip, *changes);
  for (std::size_t i = 0; i < plan.servers.size(); ++i)
    if (auto refusal = sessions[i]->sasl_refusal()) trip.sasl_refusals.push_back(std::move(*refusal));
  read_denied_acl(*sessions[plan.writer], plan, trip);
  auto closing_started = Clock::now();
  // Together, so that a server slow to close costs one close deadline, not one per session.
  for (auto& session : unused) sessions.push_back(std::move(session));
  close_all(sessions, plan.close_deadline == Clock::time_point{} ? plan.deadline : plan.close_deadline);
  // close_all has waited for the writer's close: asking again only says whether it completed.
  auto& writer = *sessions[plan.writer];
  if (trip.write_error == ZkError::ok && writer.close_ends_session())
    trip.removal_error = writer.close(Clock::now()) ? ZkError::ok : ZkError::deadline_exceeded;
  trip.steps.push_back({"", "sessions closed", closing_started, Clock::now()});
  trip.timings.cleanup += lap(closing_started);
  return trip;
}

}  // namespace zkverify::probes
