#include "probes/watch_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/steady_timer.hpp>

#include "model/facts/addresses.hpp"
#include "probes/actor.hpp"
#include "probes/host.hpp"
#include "probes/pinned_reads.hpp"

namespace zkverify::probes {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

Moment now_moment() { return {Clock::now(), std::chrono::system_clock::now()}; }

// The servers starting at servers[first] and wrapping around, forwards or backwards: that session's
// own server first.
std::vector<ServerAddress> rotated(const std::vector<ServerAddress>& servers, std::size_t first, bool backwards) {
  std::vector<ServerAddress> order;
  auto n = servers.size();
  for (std::size_t j = 0; j < n; ++j) order.push_back(servers[backwards ? (first + n - j) % n : (first + j) % n]);
  return order;
}

// Every session of the watch tries its servers in the order given, like a real client with its own
// connect string (a pinned session has just one).
KeeperOptions session_options(std::chrono::milliseconds session_timeout) {
  KeeperOptions options;
  options.session_timeout = session_timeout;
  options.in_order = true;
  return options;
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

// The events on their way to the sink, an actor of their own: a sink that is slow holds up this
// strand only, never the engine's or the sessions'.
struct Delivery : ActorCore {
  Delivery(Executor& executor, WatchEngine::Sink events_sink) : ActorCore(executor), sink(std::move(events_sink)) {}
  WatchEngine::Sink sink;
};

// Each session's name and znodes, as the book names them.
std::vector<WatchEngine::SessionZnodes> znodes_of(const WatchBook& book) {
  std::vector<WatchEngine::SessionZnodes> znodes;
  for (std::size_t i = 0; i < book.session_count(); ++i)
    znodes.push_back({book.session_name(i), book.ephemeral_path(i), book.counter_path(i)});
  return znodes;
}

}  // namespace

// A run node of another watch that the sweep may remove: only counters under it, and old enough.
struct WatchEngine::AbandonedRun {
  std::string path;
  std::vector<std::string> children;
  milliseconds age{0};  // its ctime before this run's
};

// The engine's actor (probes/actor.hpp). On its strand: the book, the writer's timer, the check in
// flight. The run's path and its znodes are constants, read from any thread; the sessions are set
// once, by start() before anything that reads them is posted, and only read after.
// The sessions' callbacks own the engine (a plain reference, not a Task: an abandoned close may
// answer late, and stop() does not wait for it); timers and checks hold Tasks, which stop() waits for.
struct WatchEngine::Engine : ActorCore {
  Engine(Executor& executor, KeeperFactory& factory, WatchSettings watch, WatchBook watch_book, Sink sink)
      : ActorCore(executor),
        settings(std::move(watch)),
        keepers(factory),
        run_path(watch_book.run_path()),
        znodes(znodes_of(watch_book)),
        book(std::move(watch_book)),
        writer(strand()),
        check_gap(strand()),
        delivery(std::make_shared<Delivery>(executor, std::move(sink))) {}

  std::shared_ptr<Engine> self() { return std::static_pointer_cast<Engine>(shared_from_this()); }

  // Applies `change` to the book at the current time (the book sees time move forward: it is read
  // on the strand), passes on the events it produced and starts the checks it asks for.
  template <class Change>
  void feed(Change change) {
    if (!open) return;
    change(book, now_moment());
    pass_on_events();
    maybe_check();
  }

  void pass_on_events() {
    auto taken = book.take_events();
    if (writes_settled()) {
      for (auto& waiter : settled_waiters) waiter.set_value();
      settled_waiters.clear();
    }
    if (taken.empty()) return;
    tell(delivery, [events = std::move(taken)](Delivery& out) {
      for (const auto& event : events)
        if (out.sink) out.sink(event);
    });
  }

  [[nodiscard]] bool writes_settled() const { return book.writes_in_flight() == 0; }

  void write_once();
  void bring_sessions_home();
  void send_write(const WatchBook::Write& write);
  void schedule_write(Clock::time_point at);
  void maybe_check();

  // The writer and the checks end; a check in flight ends by its own deadlines.
  void on_stop() override {
    writer.cancel();
    check_gap.cancel();
  }

  const WatchSettings settings;
  KeeperFactory& keepers;  // the process's (or a test's), which outlives every engine
  const std::string run_path;
  const std::vector<SessionZnodes> znodes;        // index for index with the sessions
  std::vector<std::shared_ptr<Keeper>> sessions;  // set by start(), see above
  WatchBook book;
  bool open = true;  // false once stop() ended the run: what comes later changes nothing
  bool checking = false;
  bool homing = false;             // a worker probes the own servers of sessions that failed over
  Clock::time_point next_check{};  // at most two checks a second, whatever flaps
  std::vector<std::promise<void>> settled_waiters;
  boost::asio::steady_timer writer;
  boost::asio::steady_timer check_gap;
  std::shared_ptr<Delivery> delivery;
};

namespace {

using Engine = WatchEngine::Engine;

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

// These run off the strand (a worker for a check, the command's thread for the final one): they
// wait on sessions, and reach the book only by tell and ask.

template <class Change>
void feed_book(const std::shared_ptr<Engine>& engine, Change change) {
  tell(engine, [change = std::move(change)](Engine& self) mutable { self.feed(change); });
}

void check_ephemerals(const std::shared_ptr<Engine>& engine, const std::vector<std::size_t>& sessions) {
  auto deadline = Clock::now() + engine->settings.request_timeout;
  std::vector<Expect<StatResult>> checks(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i)
    engine->sessions[sessions[i]]->exists(engine->znodes[sessions[i]].ephemeral, checks[i].callback());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto error = checks[i].await(deadline).error;
    feed_book(engine, [session = sessions[i], error](WatchBook& book, Moment now) {
      book.ephemeral_checked(session, error, now);
    });
  }
}

// Sends the sync and the reads without waiting: one session's requests are answered in order, so
// every read comes after the sync.
PendingRead start_read(const std::shared_ptr<Engine>& engine, Keeper& pinned, Clock::time_point deadline) {
  PendingRead read;
  read.error = pinned.wait_connected(deadline);
  if (read.error != ZkError::ok) return read;
  read.before = ask_now(engine, [](Engine& self) { return self.book.acked_so_far(); });
  std::vector<std::string> paths;
  for (const auto& znodes : engine->znodes) paths.push_back(znodes.counter);
  read.counters.emplace(pinned, engine->run_path, paths);
  return read;
}

// Through a session pinned to each server, all at once: sync, then every session's counter, judged
// against the acks recorded before that server's read was sent.
void read_back_everywhere(const std::shared_ptr<Engine>& engine, bool final) {
  const auto& settings = engine->settings;
  auto pinned = open_pinned(engine->keepers, settings.servers, session_options(settings.session_timeout));
  // The sessions connect at the same time, so waiting for each in turn costs one timeout in all;
  // the reads then get a deadline of their own, so a server that is down (and uses up the
  // connection wait) does not leave the others no time to read.
  auto connected_by = Clock::now() + settings.request_timeout;
  std::vector<PendingRead> reads;
  for (auto& session : pinned) reads.push_back(start_read(engine, *session, connected_by));
  auto deadline = Clock::now() + settings.request_timeout;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    auto read = reads[i].collect(settings.servers[i].name, deadline);
    feed_book(engine, [before = reads[i].before, read = std::move(read), final](WatchBook& book, Moment now) {
      book.read_back_done(before, read, final, now);
    });
  }
  close_all(pinned, Clock::now() + settings.request_timeout);
}

// On a worker: each session whose own server accepts a session pinned there (it serves) is asked
// to go back; the book hears which went, and which cannot (then no connection is spent on seeing
// its server serve).
void bring_home(const std::shared_ptr<Engine>& engine, const std::vector<std::size_t>& away) {
  const auto& settings = engine->settings;
  for (auto index : away) {
    if (!engine->sessions[index]->can_return_home()) {
      feed_book(engine, [index](WatchBook& book, Moment) { book.homecoming(index, false); });
      continue;
    }
    auto probe = engine->keepers.open({settings.servers[index]}, session_options(settings.session_timeout));
    bool serves = probe->wait_connected(Clock::now() + settings.request_timeout) == ZkError::ok;
    probe->close(Clock::now() + settings.request_timeout);
    if (!serves) continue;
    bool moving = engine->sessions[index]->return_home();
    feed_book(engine, [index, moving](WatchBook& book, Moment) { book.homecoming(index, moving); });
  }
}

// The checks the book asked for, on a worker.
void check_once(const std::shared_ptr<Engine>& engine) {
  auto [ephemerals, read_back] = ask_now(engine, [](Engine& self) {
    auto wanted = self.book.take_ephemeral_checks();
    return std::pair(std::move(wanted), self.book.take_read_back_wanted());
  });
  check_ephemerals(engine, ephemerals);
  if (read_back) read_back_everywhere(engine, false);
}

}  // namespace

// On the strand, at the rate: the next write, the book's tick, and the sessions it widens. After a
// stall (SIGSTOP, say) there is no burst to catch up.
void Engine::write_once() {
  if (stopping()) return;
  auto write = book.start_write();
  book.tick(now_moment());
  auto widen = book.take_sessions_to_widen(now_moment());
  pass_on_events();
  if (write) send_write(*write);
  if (!widen.empty()) {
    auto crowded = book.crowded_servers();
    for (auto session : widen) sessions[session]->widen(crowded);
  }
  bring_sessions_home();
  maybe_check();
  auto interval = duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / settings.rate));
  schedule_write(std::max(writer.expiry() + interval, Clock::now()));
}

void Engine::schedule_write(Clock::time_point at) {
  writer.expires_at(at);
  writer.async_wait([self = self(), task = task()](const boost::system::error_code& error) {
    if (!error) self->write_once();
  });
}

// Sets the session's counter to the write's value; the book hears the outcome on the strand.
void Engine::send_write(const WatchBook::Write& write) {
  auto done = [engine = self(), write](const StatResult& result) {
    feed_book(engine, [write, error = result.error, version = result.stat.version](WatchBook& acks, Moment now) {
      acks.write_done(write, error, version, now);
    });
  };
  sessions[write.session]->set(znodes[write.session].counter, std::to_string(write.value), -1, done);
}

// A session that failed over stays where it landed: the server there then holds two of the watch's
// sessions for the rest of the run, and with maxClientCnxns=3 and a read-back no connection is left
// for the checks beside the watch (roll's, step's). So it goes home once its own server serves.
void Engine::bring_sessions_home() {
  if (homing || stopping()) return;
  auto away = book.take_sessions_to_bring_home(now_moment());
  if (away.empty()) return;
  homing = true;
  offload(
      self(), [engine = self(), away] { bring_home(engine, away); }, [](Engine& self) { self.homing = false; });
}

// After a change: when the book wants checks and none runs, one runs on a worker (its waits block),
// at most two a second whatever flaps; a check wanted sooner is started by the gap's timer.
void Engine::maybe_check() {
  if (stopping() || checking || !book.checks_wanted()) return;
  if (Clock::now() < next_check) {
    check_gap.expires_at(next_check);
    check_gap.async_wait([self = self(), task = task()](const boost::system::error_code& error) {
      if (!error) self->maybe_check();
    });
    return;
  }
  checking = true;
  offload(
      self(), [engine = self()] { check_once(engine); },
      [](Engine& self) {
        self.checking = false;
        self.next_check = Clock::now() + milliseconds(500);
        self.maybe_check();
      });
}

WatchEngine::WatchEngine(WatchSettings settings, Executor& executor, KeeperFactory& keepers, Sink sink)
    : settings_(std::move(settings)), executor_(executor), keepers_(keepers), sink_(std::move(sink)) {}

// A destructor must not throw: a stop that fails here (out of memory, say) leaves what it could not
// remove to the next watch's sweep.
WatchEngine::~WatchEngine() {
  try {
    stop();
  } catch (...) {  // see above
  }
}

std::optional<std::string> WatchEngine::start(Clock::time_point deadline) {
  if (settings_.servers.empty()) return "no servers to watch";
  auto started = now_moment();
  auto run_path = fmt::format("{}/watch/{}-{}-{}", settings_.namespace_path, local_host_name(), getpid(),
                              duration_cast<milliseconds>(started.wall.time_since_epoch()).count());
  std::vector<std::string> names;
  for (const auto& server : settings_.servers) names.push_back(server.name);
  WatchBook book(std::move(names), run_path, settings_.rate, started);
  engine_ = std::make_shared<Engine>(executor_, keepers_, settings_, std::move(book), std::move(sink_));
  engine_->sessions = open_sessions();  // before any handler that reads them is posted

  if (auto error = connect_sessions(deadline)) return error;
  if (auto error = create_znodes(deadline)) return error;
  sweep_abandoned_runs();
  running_ = true;
  tell(engine_, [](Engine& self) {
    self.writer.expires_at(Clock::now());  // the first write's time
    self.write_once();
  });
  return std::nullopt;
}

// Each session may fail over to one other server (the next in its order) until the book widens it
// (to any server but those holding two of them already): a server then holds at most two of them,
// plus one read-back, within maxClientCnxns=3. A session's
// listener reaches the engine through a weak reference: the engine owns the session, which owns it.
std::vector<std::shared_ptr<Keeper>> WatchEngine::open_sessions() {
  auto options = session_options(settings_.session_timeout);
  options.first_choices = 2;
  std::vector<std::shared_ptr<Keeper>> sessions;
  for (std::size_t i = 0; i < settings_.servers.size(); ++i) {
    auto listener = [weak = std::weak_ptr<Engine>(engine_), i](const SessionEvent& event) {
      if (auto engine = weak.lock())
        feed_book(engine, [i, event](WatchBook& book, Moment now) { book.session_changed(i, event, now); });
    };
    sessions.push_back(keepers_.open(rotated(settings_.servers, i, settings_.fail_over_backwards), options, listener));
  }
  return sessions;
}

std::optional<std::string> WatchEngine::connect_sessions(Clock::time_point deadline) {
  for (std::size_t i = 0; i < engine_->sessions.size(); ++i)
    if (auto error = engine_->sessions[i]->wait_connected(deadline); error != ZkError::ok)
      return fmt::format("session {} could not connect: {}", engine_->znodes[i].name, to_string(error));
  return std::nullopt;
}

std::optional<std::string> WatchEngine::create_znodes(Clock::time_point deadline) {
  auto& first = *engine_->sessions.front();
  creates_sent_ = true;
  for (const auto& path : {settings_.namespace_path, settings_.namespace_path + "/watch", engine_->run_path}) {
    auto error = create_now(first, path, "", CreateMode::persistent, deadline).error;
    if (error != ZkError::ok && error != ZkError::node_exists)
      return fmt::format("cannot create {}: {}", path, to_string(error));
  }
  for (std::size_t i = 0; i < engine_->sessions.size(); ++i) {
    auto& session = *engine_->sessions[i];
    const auto& znodes = engine_->znodes[i];
    auto error = create_now(session, znodes.ephemeral, znodes.name, CreateMode::ephemeral, deadline).error;
    if (error == ZkError::ok) error = create_now(session, znodes.counter, "0", CreateMode::persistent, deadline).error;
    if (error != ZkError::ok)
      return fmt::format("cannot create the znodes of session {}: {}", znodes.name, to_string(error));
  }
  return std::nullopt;
}

// A watch that is gone (SIGKILL, a crash, a lost machine, a cleanup that could not reach the
// ensemble) leaves its run node and counters behind; its sessions took their session nodes with
// them. Sweeping is best effort, bounded by one request timeout: what stays is swept next time.
void WatchEngine::sweep_abandoned_runs() {
  auto deadline = Clock::now() + settings_.request_timeout;
  auto& keeper = *engine_->sessions.front();
  auto runs = find_abandoned_runs(keeper, deadline);
  std::vector<Expect<MultiResult>> removals(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    keeper.multi(sweep_ops(runs[i].path, runs[i].children), removals[i].callback());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // Any error leaves the node be: not_empty (a session node appeared), no_node (another watch
    // swept it first), or no answer.
    if (removals[i].await(deadline).error != ZkError::ok) continue;
    feed_book(engine_, [run = runs[i]](WatchBook& book, Moment now) {
      book.run_swept(run.path, run.children.size(), run.age, now);
    });
  }
}

// The other run nodes with no session node under them (a watch with a live session is never
// touched) and older than sweep_age. Age is by the ensemble's clocks, each node's ctime against this
// run's node's, so this machine's clock being off does not matter.
std::vector<WatchEngine::AbandonedRun> WatchEngine::find_abandoned_runs(Keeper& keeper,
                                                                        Clock::time_point deadline) const {
  auto parent = settings_.namespace_path + "/watch";
  Expect<ChildrenResult> listing;
  Expect<StatResult> ours;
  keeper.children(parent, listing.callback());
  keeper.exists(engine_->run_path, ours.callback());
  auto listed = listing.await(deadline);
  auto reference = ours.await(deadline);
  if (listed.error != ZkError::ok || reference.error != ZkError::ok) return {};
  std::vector<std::string> paths;
  std::vector<Expect<ChildrenResult>> children;
  std::vector<Expect<StatResult>> stats;
  for (const auto& name : listed.children) {
    auto path = fmt::format("{}/{}", parent, name);
    if (path == engine_->run_path) continue;
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
    if (age >= settings_.sweep_age && std::ranges::all_of(under.children, WatchBook::is_counter_name))
      abandoned.push_back({paths[i], std::move(under.children), age});
  }
  return abandoned;
}

void WatchEngine::stop_quickly(std::chrono::milliseconds step_limit) {
  final_checks_ = false;
  cleanup_limit_ = step_limit;
  stop();
}

void WatchEngine::stop() {
  if (!engine_ || stopped_) return;
  stopped_ = true;
  stop_writing_and_checking();
  if (running_ && final_checks_) finish_run();
  close_sessions();
  if (creates_sent_) remove_run_znodes();
  end_delivery();
}

// The writer's timer and the check's gap are cancelled on the strand; a check in progress on a
// worker is waited for (its steps are bounded by the request timeout). Past that bound it is left
// to end on what it owns: the engine, the sessions (closed below: its requests then answer
// `closing`).
void WatchEngine::stop_writing_and_checking() { engine_->stop_and_wait(Clock::now() + 4 * settings_.request_timeout); }

// The final checks.
void WatchEngine::finish_run() {
  settle_writes();
  check_ephemerals(engine_, ask_now(engine_, [](Engine& self) { return self.book.live_sessions(); }));
  read_back_everywhere(engine_, true);
}

// Writes still in flight get a moment to be acknowledged (or fail) before the final count.
void WatchEngine::settle_writes() {
  auto settled = ask_now(engine_, [](Engine& self) {
    std::promise<void> waiter;
    auto future = std::make_shared<std::future<void>>(waiter.get_future());
    if (self.writes_settled()) waiter.set_value();
    else self.settled_waiters.push_back(std::move(waiter));
    return future;
  });
  settled->wait_until(Clock::now() + settings_.request_timeout);
  ask_now(engine_, [](Engine& self) {
    self.book.settle(now_moment());
    self.pass_on_events();
    return true;
  });
}

void WatchEngine::close_sessions() {
  ask_now(engine_, [](Engine& self) {
    self.book.closing();
    return true;
  });
  close_all(engine_->sessions,
            Clock::now() + cleanup_limit_.value_or(settings_.request_timeout));  // the servers delete the ephemerals
}

// Whatever this run created that its sessions did not take with them: the counters (only some when
// start() failed half-way: a missing one is no error), and the session nodes of sessions whose close
// was abandoned (under load, or during an election: the servers would remove them only when those
// sessions expire), then the run's node. Everything under it is this run's own. Through a session of
// its own, whatever became of the run's (expired, or never connected). What stays (no server
// reachable) is swept by a later watch.
void WatchEngine::remove_run_znodes() {
  auto cleaner = keepers_.open(settings_.servers, session_options(settings_.session_timeout));
  auto limit = cleanup_limit_.value_or(settings_.request_timeout);
  auto deadline = Clock::now() + limit;
  if (cleaner->wait_connected(deadline) == ZkError::ok) {
    auto paths = ask_now(engine_, [](Engine& self) { return self.book.counter_paths(); });
    Expect<ChildrenResult> under;
    cleaner->children(engine_->run_path, under.callback());
    for (const auto& child : under.await(deadline).children) {
      auto path = engine_->run_path + "/" + child;
      if (std::ranges::find(paths, path) == paths.end()) paths.push_back(path);
    }
    remove_all_now(*cleaner, paths, deadline);
    remove_now(*cleaner, engine_->run_path, deadline);
    remove_now(*cleaner, settings_.namespace_path + "/watch", deadline);  // fails harmlessly while another watch runs
  }
  cleaner->close(Clock::now() + limit);
}

// Closes the book (a callback that comes after, an abandoned close's, changes neither the totals nor
// what the sink saw), then waits for the delivery's stop: the sink has seen every event once its
// last Task ended. There is no deadline: each delivery is one call of the sink, which returns at
// once (the commands' sinks hand their text to the output actor); returning earlier would leave it
// writing into what the command frees next.
void WatchEngine::end_delivery() {
  ask_now(engine_, [](Engine& self) {
    self.pass_on_events();
    self.open = false;
    return true;
  });
  engine_->delivery->stop().wait();
}

std::chrono::milliseconds WatchEngine::take_longest_unavailable() {
  if (!engine_) return std::chrono::milliseconds(0);
  return ask_now(engine_, [](Engine& self) { return self.book.take_longest_unavailable(now_moment()); });
}

WatchTotals WatchEngine::totals() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) { return self.book.totals(); });
}

}  // namespace zkverify::probes
