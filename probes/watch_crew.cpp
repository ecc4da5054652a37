#include "probes/watch_crew.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "probes/pinned_reads.hpp"

namespace zkverify::probes {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

// The servers starting at servers[first] and wrapping around, forwards or backwards: that session's
// own server first.
std::vector<ServerAddress> rotated(const std::vector<ServerAddress>& servers, std::size_t first, bool backwards) {
  std::vector<ServerAddress> order;
  auto n = servers.size();
  for (std::size_t j = 0; j < n; ++j) order.push_back(servers[backwards ? (first + n - j) % n : (first + j) % n]);
  return order;
}

// Sweeping one run node: its counters, then the node itself. All or nothing, and the node last: if
// anything else is under it by then (a session node of a watch that was only starting), removing
// it fails and nothing is removed.
std::vector<MultiOp> sweep_ops(const std::string& run, const std::vector<std::string>& children) {
  std::vector<MultiOp> ops;
  for (const auto& child : children)
    ops.push_back({MultiOp::Kind::remove, fmt::format("{}/{}", run, child), "", CreateMode::persistent, -1});
  ops.push_back({MultiOp::Kind::remove, run, "", CreateMode::persistent, -1});
  return ops;
}

// A run node of another watch that the sweep may remove: only counters under it, and old enough.
struct AbandonedRun {
  std::string path;
  std::vector<std::string> children;
  milliseconds age{0};  // its ctime before this run's
};

// One server's read-back in flight: the acks it must find, and the sync and reads sent after it.
struct PendingRead {
  ZkError error = ZkError::ok;  // when the pinned session could not connect
  WatchBook::AckedSoFar before;
  std::optional<SyncedReads> counters;

  WatchBook::ServerRead collect(const std::string& server, Clock::time_point deadline) {
    WatchBook::ServerRead read{server, error, {}};
    if (!counters) return read;
    for (auto& counter : counters->await(deadline)) {
      // A counter gone after sync lost every acknowledged write of its session (the data went, as
      // when transaction logs were not persistent): a stale read, not a read that could not be made.
      if (counter.result.error == ZkError::no_node) {
        read.counters.emplace_back();
        continue;
      }
      read.error = counter.result.error;
      read.counters.push_back(std::move(counter.result.data));
      if (read.error != ZkError::ok) break;
    }
    return read;
  }
};

}  // namespace

// Every session of the watch tries its servers in the order given, like a real client with its own
// connect string (a pinned session has just one).
KeeperOptions watch_session_options(std::chrono::milliseconds session_timeout) {
  KeeperOptions options;
  options.session_timeout = session_timeout;
  options.in_order = true;
  return options;
}

// Each session's name and znodes, as the book names them.
std::vector<WatchCrew::Znodes> znodes_of(const WatchBook& book) {
  std::vector<WatchCrew::Znodes> znodes;
  for (std::size_t i = 0; i < book.session_count(); ++i)
    znodes.push_back({book.session_name(i), book.ephemeral_path(i), book.counter_path(i)});
  return znodes;
}

void check_ephemerals(const BookLink& link, const WatchCrew& crew, const std::vector<std::size_t>& sessions) {
  auto deadline = Clock::now() + crew.settings.request_timeout;
  std::vector<Expect<StatResult>> checks(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i)
    crew.sessions[sessions[i]]->exists(crew.znodes[sessions[i]].ephemeral, checks[i].callback());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto error = checks[i].await(deadline).error;
    link.tell(
        [session = sessions[i], error](WatchBook& book, Moment now) { book.ephemeral_checked(session, error, now); });
  }
}

namespace {

// Sends the sync and the reads without waiting: one session's requests are answered in order, so
// every read comes after the sync.
PendingRead start_read(const BookLink& link, const WatchCrew& crew, Keeper& pinned, Clock::time_point deadline) {
  PendingRead read;
  read.error = pinned.wait_connected(deadline);
  if (read.error != ZkError::ok) return read;
  read.before = link.acked_so_far();
  std::vector<std::string> paths;
  for (const auto& znodes : crew.znodes) paths.push_back(znodes.counter);
  read.counters.emplace(pinned, crew.run_path, paths);
  return read;
}

}  // namespace

// Through a session pinned to each server, all at once: sync, then every session's counter, judged
// against the acks recorded before that server's read was sent.
void read_back_everywhere(const BookLink& link, const WatchCrew& crew, bool final) {
  const auto& settings = crew.settings;
  auto pinned = open_pinned(crew.keepers, settings.servers, watch_session_options(settings.session_timeout));
  // The sessions connect at the same time, so waiting for each in turn costs one timeout in all;
  // the reads then get a deadline of their own, so a server that is down (and uses up the
  // connection wait) does not leave the others no time to read.
  auto connected_by = Clock::now() + settings.request_timeout;
  std::vector<PendingRead> reads;
  for (auto& session : pinned) reads.push_back(start_read(link, crew, *session, connected_by));
  auto deadline = Clock::now() + settings.request_timeout;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    auto read = reads[i].collect(settings.servers[i].name, deadline);
    link.tell([before = reads[i].before, read = std::move(read), final](WatchBook& book, Moment now) {
      book.read_back_done(before, read, final, now);
    });
  }
  close_all(pinned, Clock::now() + settings.request_timeout);
}

// Each session whose own server accepts a session pinned there (it serves) is asked to go back; the
// book hears which went, and which cannot (then no connection is spent on seeing its server serve).
void bring_home(const BookLink& link, const WatchCrew& crew, const std::vector<std::size_t>& away) {
  const auto& settings = crew.settings;
  for (auto index : away) {
    if (!crew.sessions[index]->can_return_home()) {
      link.tell([index](WatchBook& book, Moment) { book.homecoming(index, false); });
      continue;
    }
    auto probe = crew.keepers.open({settings.servers[index]}, watch_session_options(settings.session_timeout));
    bool serves = probe->wait_connected(Clock::now() + settings.request_timeout) == ZkError::ok;
    probe->close(Clock::now() + settings.request_timeout);
    if (!serves) continue;
    bool moving = crew.sessions[index]->return_home();
    link.tell([index, moving](WatchBook& book, Moment) { book.homecoming(index, moving); });
  }
}

// Whatever this run created that its sessions did not take with them: the counters (only some when
// start() failed half-way: a missing one is no error), and the session nodes of sessions whose close
// was abandoned (under load, or during an election: the servers would remove them only when those
// sessions expire), then the run's node. Everything under it is this run's own. Through a session of
// its own, whatever became of the run's (expired, or never connected). What stays (no server
// reachable) is swept by a later watch.
void remove_run_znodes(const WatchCrew& crew, std::vector<std::string> paths, milliseconds limit) {
  const auto& settings = crew.settings;
  auto cleaner = crew.keepers.open(settings.servers, watch_session_options(settings.session_timeout));
  auto deadline = Clock::now() + limit;
  if (cleaner->wait_connected(deadline) == ZkError::ok) {
    Expect<ChildrenResult> under;
    cleaner->children(crew.run_path, under.callback());
    for (const auto& child : under.await(deadline).children) {
      auto path = crew.run_path + "/" + child;
      if (std::ranges::find(paths, path) == paths.end()) paths.push_back(path);
    }
    remove_all_now(*cleaner, paths, deadline);
    remove_now(*cleaner, crew.run_path, deadline);
    remove_now(*cleaner, settings.namespace_path + "/watch", deadline);  // fails harmlessly while another watch runs
  }
  cleaner->close(Clock::now() + limit);
}

// Each session may fail over to one other server (the next in its order) until the book widens it
// (to any server but those holding two of them already): a server then holds at most two of them,
// plus one read-back, within maxClientCnxns=3.
std::vector<std::shared_ptr<Keeper>> open_watch_sessions(const WatchSettings& settings, KeeperFactory& keepers,
                                                         const SessionEvents& on_event) {
  auto options = watch_session_options(settings.session_timeout);
  options.first_choices = 2;
  std::vector<std::shared_ptr<Keeper>> sessions;
  for (std::size_t i = 0; i < settings.servers.size(); ++i) {
    auto listener = [on_event, i](const SessionEvent& event) { on_event(i, event); };
    sessions.push_back(keepers.open(rotated(settings.servers, i, settings.fail_over_backwards), options, listener));
  }
  return sessions;
}

std::optional<std::string> connect_sessions(const WatchCrew& crew, Clock::time_point deadline) {
  for (std::size_t i = 0; i < crew.sessions.size(); ++i)
    if (auto error = crew.sessions[i]->wait_connected(deadline); error != ZkError::ok)
      return fmt::format("session {} could not connect: {}", crew.znodes[i].name, to_string(error));
  return std::nullopt;
}

std::optional<std::string> create_znodes(const WatchCrew& crew, Clock::time_point deadline) {
  const auto& space = crew.settings.namespace_path;
  auto& first = *crew.sessions.front();
  for (const auto& path : {space, space + "/watch", crew.run_path}) {
    auto error = create_now(first, path, "", CreateMode::persistent, deadline).error;
    if (error != ZkError::ok && error != ZkError::node_exists)
      return fmt::format("cannot create {}: {}", path, to_string(error));
  }
  for (std::size_t i = 0; i < crew.sessions.size(); ++i) {
    auto& session = *crew.sessions[i];
    const auto& znodes = crew.znodes[i];
    auto error = create_now(session, znodes.ephemeral, znodes.name, CreateMode::ephemeral, deadline).error;
    if (error == ZkError::ok) error = create_now(session, znodes.counter, "0", CreateMode::persistent, deadline).error;
    if (error != ZkError::ok)
      return fmt::format("cannot create the znodes of session {}: {}", znodes.name, to_string(error));
  }
  return std::nullopt;
}

namespace {

// The other run nodes with no session node under them (a watch with a live session is never
// touched) and older than sweep_age. Age is by the ensemble's clocks, each node's ctime against this
// run's node's, so this machine's clock being off does not matter.
std::vector<AbandonedRun> find_abandoned_runs(const WatchCrew& crew, Keeper& keeper, Clock::time_point deadline) {
  auto parent = crew.settings.namespace_path + "/watch";
  Expect<ChildrenResult> listing;
  Expect<StatResult> ours;
  keeper.children(parent, listing.callback());
  keeper.exists(crew.run_path, ours.callback());
  auto listed = listing.await(deadline);
  auto reference = ours.await(deadline);
  if (listed.error != ZkError::ok || reference.error != ZkError::ok) return {};
  std::vector<std::string> paths;
  std::vector<Expect<ChildrenResult>> children;
  std::vector<Expect<StatResult>> stats;
  for (const auto& name : listed.children) {
    auto path = fmt::format("{}/{}", parent, name);
    if (path == crew.run_path) continue;
    paths.push_back(std::move(path));
    keeper.children(paths.back(), children.emplace_back().callback());
    keeper.exists(paths.back(), stats.emplace_back().callback());
  }
  std::vector<AbandonedRun> abandoned;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto under = children[i].await(deadline);
    auto stat = stats[i].await(deadline);
    if (under.error != ZkError::ok || stat.error != ZkError::ok) continue;
    auto age = duration_cast<milliseconds>(reference.stat.ctime - stat.stat.ctime);
    if (age >= crew.settings.sweep_age && std::ranges::all_of(under.children, WatchBook::is_counter_name))
      abandoned.push_back({paths[i], std::move(under.children), age});
  }
  return abandoned;
}

}  // namespace

// A watch that is gone (SIGKILL, a crash, a lost machine, a cleanup that could not reach the
// ensemble) leaves its run node and counters behind; its sessions took their session nodes with
// them. Sweeping is best effort, bounded by one request timeout: what stays is swept next time.
void sweep_abandoned_runs(const BookLink& link, const WatchCrew& crew) {
  auto deadline = Clock::now() + crew.settings.request_timeout;
  auto& keeper = *crew.sessions.front();
  auto runs = find_abandoned_runs(crew, keeper, deadline);
  std::vector<Expect<MultiResult>> removals(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    keeper.multi(sweep_ops(runs[i].path, runs[i].children), removals[i].callback());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // Any error leaves the node be: not_empty (a session node appeared), no_node (another watch
    // swept it first), or no answer.
    if (removals[i].await(deadline).error != ZkError::ok) continue;
    link.tell(
        [run = runs[i]](WatchBook& book, Moment now) { book.run_swept(run.path, run.children.size(), run.age, now); });
  }
}

}  // namespace zkverify::probes
