#include "probes/smoke_cases.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "probes/client_reads.hpp"
#include "probes/host.hpp"
#include "probes/notice_wait.hpp"
#include "probes/pinned_reads.hpp"
#include "probes/stop_signals.hpp"

namespace zkverify::probes {

namespace {

using std::chrono::microseconds;

microseconds since(Clock::time_point start) { return std::chrono::duration_cast<microseconds>(Clock::now() - start); }

// Records a step; true when it ended as `expected`.
bool record(CaseRun& run, std::string what, std::string server, ZkError error, ZkError expected = ZkError::ok) {
  run.steps.push_back({std::move(what), std::move(server), error});
  return error == expected;
}

std::size_t writer_index(const SmokePlan& plan) {
  for (std::size_t i = 0; i < plan.servers.size(); ++i)
    if (plan.servers[i].name == plan.leader) return i;
  return 0;
}

// Another server than the writer, when there is one (the writer otherwise).
std::size_t other_index(const SmokePlan& plan) {
  auto writer = writer_index(plan);
  return plan.servers.size() > 1 ? (writer == 0 ? 1 : 0) : writer;
}

// Sessions pinned one to each of `servers`, opened at once; `errors` says how each connect ended.
struct Pinned {
  std::vector<std::unique_ptr<Keeper>> sessions;
  std::vector<ZkError> errors;
};

Pinned open_pinned(KeeperFactory& keepers, const std::vector<ServerAddress>& servers, const SmokePlan& plan,
                   Clock::time_point deadline) {
  KeeperOptions options;
  options.session_timeout = plan.session_timeout;
  Pinned pinned{probes::open_pinned(keepers, servers, options), {}};
  for (auto& session : pinned.sessions) pinned.errors.push_back(session->wait_connected(deadline));
  return pinned;
}

std::unique_ptr<Keeper> open_one(KeeperFactory& keepers, const ServerAddress& server, const SmokePlan& plan,
                                 CaseRun& run, Clock::time_point deadline) {
  KeeperOptions options;
  options.session_timeout = plan.session_timeout;
  auto session = keepers.open({server}, options);
  if (!record(run, "connect", server.name, session->wait_connected(deadline))) return nullptr;
  return session;
}

// Sync, then a get of `path`, on each connected session (pinned_reads); a session that did not
// connect gets its connect error.
std::vector<GetResult> get_after_sync(Pinned& pinned, const std::string& path, Clock::time_point deadline) {
  std::vector<std::optional<SyncedReads>> pending(pinned.sessions.size());
  for (std::size_t i = 0; i < pinned.sessions.size(); ++i)
    if (pinned.errors[i] == ZkError::ok) pending[i].emplace(*pinned.sessions[i], path, std::vector{path});
  std::vector<GetResult> results(pinned.sessions.size());
  for (std::size_t i = 0; i < pinned.sessions.size(); ++i) {
    if (pending[i]) results[i] = std::move(pending[i]->await(deadline).front().result);
    else results[i].error = pinned.errors[i];
  }
  return results;
}

// Whether `path` is there on each server, after sync: ok, or no_node when it is gone.
std::vector<ServerLookup> lookups_after_sync(Pinned& pinned, const std::vector<ServerAddress>& servers,
                                             const std::string& path, Clock::time_point deadline) {
  auto found = get_after_sync(pinned, path, deadline);
  std::vector<ServerLookup> lookups;
  for (std::size_t i = 0; i < servers.size(); ++i) lookups.push_back({servers[i].name, found[i].error});
  return lookups;
}

// Watches `path` through each connected session, after sync (so that server has the node): the
// notice comes when that server removes it. nullptr where no watch could be set.
std::vector<std::shared_ptr<NoticeWait>> watch_each(Pinned& pinned, const std::string& path,
                                                    Clock::time_point deadline) {
  std::vector<std::shared_ptr<NoticeWait>> boxes(pinned.sessions.size());
  for (std::size_t i = 0; i < pinned.sessions.size(); ++i) {
    if (pinned.errors[i] != ZkError::ok) continue;
    Expect<DoneResult> synced;
    pinned.sessions[i]->sync(path, synced.callback());
    if (synced.await(deadline).error != ZkError::ok) continue;
    auto box = std::make_shared<NoticeWait>();
    auto fired = [box](WatchNotice notice) { box->notice(std::move(notice)); };
    if (get_and_watch_now(*pinned.sessions[i], path, fired, deadline).error == ZkError::ok) boxes[i] = box;
  }
  return boxes;
}

RoundTripSeen round_trip_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  RoundTripSeen seen;
  const auto& writer = plan.servers[writer_index(plan)];
  seen.writer = writer.name;
  auto path = plan.run_path + "/round-trip";
  auto payload = fmt::format("zkverify smoke round trip {}", plan.run_path);
  auto pinned = open_pinned(keepers, plan.servers, plan, deadline);
  auto& session = *pinned.sessions[writer_index(plan)];
  if (record(seen.run, "connect", writer.name, pinned.errors[writer_index(plan)]) &&
      record(seen.run, "create " + path, writer.name,
             create_now(session, path, payload, CreateMode::persistent, deadline).error)) {
    auto reads = get_after_sync(pinned, path, deadline);
    for (std::size_t i = 0; i < plan.servers.size(); ++i)
      seen.reads.push_back(
          {plan.servers[i].name, reads[i].error, reads[i].error == ZkError::ok && reads[i].data == payload});
  }
  close_all(pinned.sessions, deadline);
  return seen;
}

EphemeralSeen ephemeral_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  EphemeralSeen seen;
  const auto& creator = plan.servers[other_index(plan)];
  seen.creator = creator.name;
  seen.path = plan.run_path + "/ephemeral";
  auto observers = open_pinned(keepers, plan.servers, plan, deadline);
  if (auto session = open_one(keepers, creator, plan, seen.run, deadline)) {
    if (record(seen.run, "create ephemeral " + seen.path, creator.name,
               create_now(*session, seen.path, "", CreateMode::ephemeral, deadline).error)) {
      auto boxes = watch_each(observers, seen.path, deadline);
      seen.close_completed = session->close(deadline);
      record(seen.run, "close the creating session", creator.name,
             seen.close_completed ? ZkError::ok : ZkError::deadline_exceeded);
      if (seen.close_completed) {
        // zookeeper_close returns once the close request is sent, not once the session has ended:
        // each server's watch tells when it removed the node. Half the time left is for that.
        auto removed_by = Clock::now() + (deadline - Clock::now()) / 2;
        for (const auto& box : boxes)
          if (box) box->wait(removed_by, plan.stop_signals);
        seen.after_close = lookups_after_sync(observers, plan.servers, seen.path, deadline);
      }
    }
  }
  close_all(observers.sessions, deadline);
  return seen;
}

WatchSeen watch_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  WatchSeen seen;
  const auto& writer = plan.servers[writer_index(plan)];
  const auto& watcher = plan.servers[other_index(plan)];
  seen.writer = writer.name;
  seen.watcher = watcher.name;
  auto path = plan.run_path + "/watched";
  auto writing = open_one(keepers, writer, plan, seen.run, deadline);
  auto watching = writing ? open_one(keepers, watcher, plan, seen.run, deadline) : nullptr;
  auto box = std::make_shared<NoticeWait>();
  auto fired = [box](WatchNotice notice) { box->notice(std::move(notice)); };
  if (watching && record(seen.run, "create " + path, writer.name,
                         create_now(*writing, path, "0", CreateMode::persistent, deadline).error)) {
    Expect<DoneResult> synced;
    watching->sync(path, synced.callback());
    if (record(seen.run, "sync", watcher.name, synced.await(deadline).error) &&
        record(seen.run, "get and watch " + path, watcher.name,
               get_and_watch_now(*watching, path, fired, deadline).error)) {
      Expect<StatResult> written;
      writing->set(path, "1", -1, written.callback());
      if (record(seen.run, "set " + path, writer.name, written.await(deadline).error)) {
        auto acked = Clock::now();
        auto noticed = box->wait(deadline, plan.stop_signals);
        seen.waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - acked);
        if (noticed) {
          seen.notice = noticed->notice;
          seen.delay = std::chrono::duration_cast<microseconds>(std::max(noticed->at, acked) - acked);
        }
      }
    }
  }
  std::vector<std::unique_ptr<Keeper>> sessions;
  sessions.push_back(std::move(writing));
  sessions.push_back(std::move(watching));
  close_all(sessions, deadline);
  return seen;
}

constexpr int kSequentialPerServer = 3;

SequentialSeen sequential_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  SequentialSeen seen;
  const auto& writer = plan.servers[writer_index(plan)];
  auto parent = plan.run_path + "/sequential";
  auto pinned = open_pinned(keepers, plan.servers, plan, deadline);
  auto& session = *pinned.sessions[writer_index(plan)];
  if (record(seen.run, "connect", writer.name, pinned.errors[writer_index(plan)]) &&
      record(seen.run, "create " + parent, writer.name,
             create_now(session, parent, "", CreateMode::persistent, deadline).error)) {
    // Every create is started before any is awaited: they race through the servers to the leader.
    std::vector<std::pair<std::size_t, Expect<CreateResult>>> creates;
    for (int round = 0; round < kSequentialPerServer; ++round)
      for (std::size_t i = 0; i < plan.servers.size(); ++i) {
        creates.emplace_back(i, Expect<CreateResult>{});
        if (pinned.errors[i] == ZkError::ok)
          pinned.sessions[i]->create(parent + "/n-", plan.servers[i].name, CreateMode::persistent_sequential,
                                     creates.back().second.callback());
      }
    for (auto& [server, created] : creates) {
      auto result =
          pinned.errors[server] == ZkError::ok ? created.await(deadline) : CreateResult{pinned.errors[server], {}, {}};
      seen.creates.push_back({plan.servers[server].name, result.error, result.path, result.stat.czxid});
    }
  }
  close_all(pinned.sessions, deadline);
  return seen;
}

MultiSeen multi_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  MultiSeen seen;
  const auto& writer = plan.servers[writer_index(plan)];
  seen.server = writer.name;
  std::vector<MultiOp> ops{{MultiOp::Kind::create, plan.run_path + "/multi-a", "a", CreateMode::persistent, -1},
                           {MultiOp::Kind::create, plan.run_path + "/multi-b", "b", CreateMode::persistent, -1},
                           {MultiOp::Kind::remove, plan.run_path + "/multi-absent", "", CreateMode::persistent, -1}};
  if (auto session = open_one(keepers, writer, plan, seen.run, deadline)) {
    Expect<MultiResult> applied;
    session->multi(ops, applied.callback());
    auto result = applied.await(deadline);
    seen.multi_error = result.error;
    seen.each = result.each;
    for (std::size_t i = 0; i + 1 < ops.size(); ++i)
      seen.creates_left.push_back({ops[i].path, exists_now(*session, ops[i].path, deadline).error});
    session->close(deadline);
  }
  return seen;
}

CasSeen cas_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  CasSeen seen;
  const auto& writer = plan.servers[writer_index(plan)];
  seen.server = writer.name;
  auto path = plan.run_path + "/cas";
  auto session = open_one(keepers, writer, plan, seen.run, deadline);
  if (session && record(seen.run, "create " + path, writer.name,
                        create_now(*session, path, "v0", CreateMode::persistent, deadline).error)) {
    Expect<StatResult> good;
    session->set(path, "v1", 0, good.callback());
    auto first = good.await(deadline);
    if (record(seen.run, "set " + path + " at version 0", writer.name, first.error)) {
      seen.version_before = first.stat.version;
      seen.data_before = "v1";
      Expect<StatResult> stale;
      session->set(path, "stale", 0, stale.callback());
      seen.stale_set_error = stale.await(deadline).error;
      auto after = get_now(*session, path, deadline);
      if (record(seen.run, "get " + path, writer.name, after.error)) {
        seen.data_after = after.data;
        seen.version_after = after.stat.version;
      }
    }
  }
  if (session) session->close(deadline);
  return seen;
}

// One session over every server, the `from` server first so that it connects there (in order).
std::vector<ServerAddress> starting_at(const std::vector<ServerAddress>& servers, std::size_t from, std::size_t to) {
  std::vector<ServerAddress> ordered{servers[from]};
  if (to != from) ordered.push_back(servers[to]);
  for (std::size_t i = 0; i < servers.size(); ++i)
    if (i != from && i != to) ordered.push_back(servers[i]);
  return ordered;
}

void move_session(MoveSeen& seen, Keeper& session, const std::string& path, Clock::time_point deadline) {
  if (!record(seen.run, "create ephemeral " + path, seen.from,
              create_now(session, path, "", CreateMode::ephemeral, deadline).error))
    return;
  seen.id_before = session.session_id();
  if (!record(seen.run, "move the session to " + seen.to, seen.from, session.move_to(seen.to))) return;
  bool arrived = session.wait_connected_to(seen.to, deadline);
  seen.connected_after = session.connected_server();
  if (!record(seen.run, "reconnect on " + seen.to, seen.to, arrived ? ZkError::ok : ZkError::deadline_exceeded)) return;
  seen.id_after = session.session_id();
  seen.ephemeral_after = get_now(session, path, deadline).error;
}

MoveSeen move_case(const SmokePlan& plan, KeeperFactory& keepers, Clock::time_point deadline) {
  MoveSeen seen;
  auto from = other_index(plan);
  auto to = writer_index(plan) != from ? writer_index(plan) : (from + 1) % plan.servers.size();
  seen.from = plan.servers[from].name;
  seen.to = plan.servers[to].name;
  if (from == to) return seen;  // one server: nowhere to move to
  KeeperOptions options;
  options.session_timeout = plan.session_timeout;
  options.in_order = true;
  auto session = keepers.open(starting_at(plan.servers, from, to), options);
  auto path = plan.run_path + "/moving";
  if (record(seen.run, "connect", seen.from, session->wait_connected(deadline)) &&
      record(seen.run, "connected to " + seen.from, session->connected_server(),
             session->connected_server() == seen.from ? ZkError::ok : ZkError::invalid_state)) {
    move_session(seen, *session, path, deadline);
    if (seen.id_after) {
      auto other = open_pinned(keepers, {plan.servers[from]}, plan, deadline);
      seen.ephemeral_elsewhere = lookups_after_sync(other, {plan.servers[from]}, path, deadline).front().error;
      close_all(other.sessions, deadline);
    }
  }
  session->close(deadline);
  return seen;
}

// Each operation awaited before the next: one sample is one request's round trip.
template <class Start>
OpSamples time_ops(const std::string& op, int count, const SmokePlan& plan, Clock::time_point deadline, Start start) {
  OpSamples samples{op, {}, 0, ZkError::ok};
  for (int i = 0; i < count && !(plan.stop_requested && plan.stop_requested()); ++i) {
    auto began = Clock::now();
    auto error = start(i);
    if (error == ZkError::ok) {
      samples.samples.push_back(since(began));
      continue;
    }
    if (samples.errors++ == 0) samples.first_error = error;
    if (Clock::now() >= deadline) break;
  }
  return samples;
}

LatencySeen latency_case(const SmokePlan& plan, std::size_t index, KeeperFactory& keepers, Clock::time_point deadline) {
  LatencySeen seen;
  const auto& server = plan.servers[index];
  seen.server = server.name;
  auto session = open_one(keepers, server, plan, seen.run, deadline);
  if (!session) return seen;
  auto node = [&](int i) { return fmt::format("{}/latency-{}-{}", plan.run_path, index, i); };
  auto& keeper = *session;
  seen.ops.push_back(time_ops("create", plan.ops, plan, deadline, [&](int i) {
    return create_now(keeper, node(i), "x", CreateMode::persistent, deadline).error;
  }));
  seen.ops.push_back(time_ops("set", plan.ops, plan, deadline, [&](int i) {
    Expect<StatResult> set;
    keeper.set(node(i), "y", -1, set.callback());
    return set.await(deadline).error;
  }));
  seen.ops.push_back(
      time_ops("get", plan.ops, plan, deadline, [&](int i) { return get_now(keeper, node(i), deadline).error; }));
  seen.ops.push_back(
      time_ops("delete", plan.ops, plan, deadline, [&](int i) { return remove_now(keeper, node(i), deadline); }));
  session->close(deadline);
  return seen;
}

// Runs one case with its own deadline and clock, unless a stop was requested.
template <class Seen, class Case>
void run_case(Seen& seen, const SmokePlan& plan, bool& stopped, Case body) {
  if (stopped || (plan.stop_requested && plan.stop_requested())) {
    stopped = true;
    return;
  }
  auto began = Clock::now();
  seen = body(began + plan.case_timeout);
  seen.run.ran = true;
  seen.run.elapsed = since(began);
}

// The run path's descendants, deepest first (the suite nests at most two levels below it).
std::vector<std::string> descendants(Keeper& keeper, const std::string& path, int depth, Clock::time_point deadline) {
  std::vector<std::string> found;
  if (depth == 0) return found;
  Expect<ChildrenResult> listed;
  keeper.children(path, listed.callback());
  for (const auto& child : listed.await(deadline).children) {
    auto child_path = fmt::format("{}/{}", path, child);
    auto below = descendants(keeper, child_path, depth - 1, deadline);
    found.insert(found.end(), below.begin(), below.end());
    found.push_back(std::move(child_path));
  }
  return found;
}

void clean_up(SmokeObservations& seen, Keeper& janitor, Clock::time_point deadline) {
  auto paths = descendants(janitor, seen.run_path, 3, deadline);
  paths.push_back(seen.run_path);
  // Children before parents: each remove is awaited, so a parent goes only once it is empty.
  ZkError first = ZkError::ok;
  for (const auto& path : paths) {
    auto error = remove_now(janitor, path, deadline);
    if (error != ZkError::ok && error != ZkError::no_node && first == ZkError::ok) first = error;
  }
  seen.cleanup = {"remove " + seen.run_path, janitor.connected_server(), first};
  if (exists_now(janitor, seen.run_path, deadline).error != ZkError::no_node) {
    seen.left_behind = descendants(janitor, seen.run_path, 3, deadline);
    seen.left_behind.push_back(seen.run_path);
  }
}

ZkError prepare(const SmokePlan& plan, Keeper& janitor, Clock::time_point deadline) {
  auto made = create_now(janitor, plan.namespace_path, "", CreateMode::persistent, deadline).error;
  if (made != ZkError::ok && made != ZkError::node_exists) return made;
  return create_now(janitor, plan.run_path, "", CreateMode::persistent, deadline).error;
}

void run_cases(const SmokePlan& plan, KeeperFactory& keepers, SmokeObservations& seen) {
  bool& stopped = seen.stopped;
  run_case(seen.round_trip, plan, stopped, [&](auto deadline) { return round_trip_case(plan, keepers, deadline); });
  run_case(seen.ephemeral, plan, stopped, [&](auto deadline) { return ephemeral_case(plan, keepers, deadline); });
  run_case(seen.watch, plan, stopped, [&](auto deadline) { return watch_case(plan, keepers, deadline); });
  run_case(seen.sequential, plan, stopped, [&](auto deadline) { return sequential_case(plan, keepers, deadline); });
  run_case(seen.multi, plan, stopped, [&](auto deadline) { return multi_case(plan, keepers, deadline); });
  run_case(seen.cas, plan, stopped, [&](auto deadline) { return cas_case(plan, keepers, deadline); });
  run_case(seen.move, plan, stopped, [&](auto deadline) { return move_case(plan, keepers, deadline); });
  for (std::size_t i = 0; i < plan.servers.size(); ++i) {
    seen.latency.emplace_back();
    seen.latency.back().server = plan.servers[i].name;
    run_case(seen.latency.back(), plan, stopped,
             [&, i](auto deadline) { return latency_case(plan, i, keepers, deadline); });
  }
}

}  // namespace

std::string smoke_run_path(const std::string& namespace_path) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  auto base = namespace_path == "/" ? std::string() : namespace_path;
  return fmt::format("{}/smoke-{}-{}-{}", base, local_host_name(), getpid(), now.count());
}

SmokeObservations run_smoke(const SmokePlan& plan, KeeperFactory& keepers) {
  SmokeObservations seen;
  seen.run_path = plan.run_path;
  for (const auto& server : plan.servers) seen.servers.push_back(server.name);
  // The janitor may use any server: it only prepares and cleans up.
  KeeperOptions options;
  options.session_timeout = plan.session_timeout;
  auto janitor = keepers.open(plan.servers, options);
  auto deadline = Clock::now() + plan.case_timeout;
  auto connected = janitor->wait_connected(deadline);
  seen.prepare = {"create " + plan.run_path, janitor->connected_server(),
                  connected == ZkError::ok ? prepare(plan, *janitor, deadline) : connected};
  if (seen.prepare.error == ZkError::ok) run_cases(plan, keepers, seen);
  // The clients' registrations are theirs, not the run path's: read even when it could not be made.
  if (connected == ZkError::ok && !plan.client_paths.empty() && !seen.stopped)
    seen.clients = read_client_paths(*janitor, plan.client_paths, Clock::now() + plan.case_timeout);
  // Cleanup gets a deadline of its own, also after a stop request or a failed case.
  if (connected == ZkError::ok) clean_up(seen, *janitor, Clock::now() + plan.case_timeout);
  janitor->close(Clock::now() + plan.case_timeout);
  return seen;
}

}  // namespace zkverify::probes
