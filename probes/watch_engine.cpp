#include "probes/watch_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/steady_timer.hpp>

#include "model/books/watch_cadence.hpp"
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

// What the engine's strand, its workers and start() all read and nobody changes once start() made
// it: shared as const, so a worker reads it without asking the strand. The sessions are actors.
struct Crew {
  struct Znodes {
    std::string name;       // the server the session prefers
    std::string ephemeral;  // its ephemeral znode
    std::string counter;    // the node its writes set, to increasing values
  };
  WatchSettings settings;
  KeeperFactory& keepers;  // the process's (or a test's), which outlives every engine
  std::string run_path;
  std::vector<Znodes> znodes;                     // index for index with the sessions
  std::vector<std::shared_ptr<Keeper>> sessions;  // each reaches the engine by a weak reference
};

using CrewPtr = std::shared_ptr<const Crew>;

// Each session's name and znodes, as the book names them.
std::vector<Crew::Znodes> znodes_of(const WatchBook& book) {
  std::vector<Crew::Znodes> znodes;
  for (std::size_t i = 0; i < book.session_count(); ++i)
    znodes.push_back({book.session_name(i), book.ephemeral_path(i), book.counter_path(i)});
  return znodes;
}

// A run node of another watch that the sweep may remove: only counters under it, and old enough.
struct AbandonedRun {
  std::string path;
  std::vector<std::string> children;
  milliseconds age{0};  // its ctime before this run's
};

}  // namespace

// The engine's actor (probes/actor.hpp). On its strand: the book, the cadence, the timers, the stop.
// The sessions' callbacks reach it by a weak reference (an abandoned close may answer late); timers,
// checks and the stop's stages hold Tasks.
struct WatchEngine::Engine : ActorCore {
  Engine(Executor& executor, WatchBook watch_book, double rate, bool keep_events, Sink sink)
      : ActorCore(executor),
        book(std::move(watch_book)),
        cadence(rate),
        keep(keep_events),
        writer(strand()),
        check_gap(strand()),
        stage_timer(strand()),
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

  void pass_on_events();
  [[nodiscard]] bool writes_settled() const { return book.writes_in_flight() == 0; }
  void set_crew(CrewPtr given);
  void begin();
  void write_once();
  void bring_sessions_home();
  void send_write(const WatchBook::Write& write);
  void maybe_check();
  template <class Then>
  void after(Clock::time_point at, boost::asio::steady_timer& timer, Then then);

  std::shared_future<void> begin_stop(const StopPlan& plan);
  void run_stage();
  void start_stage(unsigned generation);
  void progress();
  void stage_ended(unsigned generation, bool in_time);

  CrewPtr crew;  // from set_crew(): nothing that reads it starts before
  WatchBook book;
  WatchCadence cadence;
  const bool keep;
  std::vector<WatchEvent> log;  // when keep
  bool open = true;             // false once the stop delivered: what comes later changes nothing
  std::optional<WatchStop> stop_sequence;
  milliseconds cleanup{0};        // closing's bound, and removing's connect and close each
  unsigned stage_generation = 0;  // a stage's end that comes after the next began is stale
  std::promise<void> stopped;
  boost::asio::steady_timer writer;
  boost::asio::steady_timer check_gap;
  boost::asio::steady_timer stage_timer;
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

// These run on a worker (or, at start, the command's thread): they wait on sessions, read the crew,
// and reach the book only by tell and ask.

template <class Change>
void feed_book(const std::shared_ptr<Engine>& engine, Change change) {
  tell(engine, [change = std::move(change)](Engine& self) mutable { self.feed(change); });
}

void check_ephemerals(const std::shared_ptr<Engine>& engine, const Crew& crew,
                      const std::vector<std::size_t>& sessions) {
  auto deadline = Clock::now() + crew.settings.request_timeout;
  std::vector<Expect<StatResult>> checks(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i)
    crew.sessions[sessions[i]]->exists(crew.znodes[sessions[i]].ephemeral, checks[i].callback());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto error = checks[i].await(deadline).error;
    feed_book(engine, [session = sessions[i], error](WatchBook& book, Moment now) {
      book.ephemeral_checked(session, error, now);
    });
  }
}

// Sends the sync and the reads without waiting: one session's requests are answered in order, so
// every read comes after the sync.
PendingRead start_read(const std::shared_ptr<Engine>& engine, const Crew& crew, Keeper& pinned,
                       Clock::time_point deadline) {
  PendingRead read;
  read.error = pinned.wait_connected(deadline);
  if (read.error != ZkError::ok) return read;
  read.before = ask_now(engine, [](Engine& self) { return self.book.acked_so_far(); });
  std::vector<std::string> paths;
  for (const auto& znodes : crew.znodes) paths.push_back(znodes.counter);
  read.counters.emplace(pinned, crew.run_path, paths);
  return read;
}

// Through a session pinned to each server, all at once: sync, then every session's counter, judged
// against the acks recorded before that server's read was sent.
void read_back_everywhere(const std::shared_ptr<Engine>& engine, const Crew& crew, bool final) {
  const auto& settings = crew.settings;
  auto pinned = open_pinned(crew.keepers, settings.servers, session_options(settings.session_timeout));
  // The sessions connect at the same time, so waiting for each in turn costs one timeout in all;
  // the reads then get a deadline of their own, so a server that is down (and uses up the
  // connection wait) does not leave the others no time to read.
  auto connected_by = Clock::now() + settings.request_timeout;
  std::vector<PendingRead> reads;
  for (auto& session : pinned) reads.push_back(start_read(engine, crew, *session, connected_by));
  auto deadline = Clock::now() + settings.request_timeout;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    auto read = reads[i].collect(settings.servers[i].name, deadline);
    feed_book(engine, [before = reads[i].before, read = std::move(read), final](WatchBook& book, Moment now) {
      book.read_back_done(before, read, final, now);
    });
  }
  close_all(pinned, Clock::now() + settings.request_timeout);
}

// Each session whose own server accepts a session pinned there (it serves) is asked to go back; the
// book hears which went, and which cannot (then no connection is spent on seeing its server serve).
void bring_home(const std::shared_ptr<Engine>& engine, const Crew& crew, const std::vector<std::size_t>& away) {
  const auto& settings = crew.settings;
  for (auto index : away) {
    if (!crew.sessions[index]->can_return_home()) {
      feed_book(engine, [index](WatchBook& book, Moment) { book.homecoming(index, false); });
      continue;
    }
    auto probe = crew.keepers.open({settings.servers[index]}, session_options(settings.session_timeout));
    bool serves = probe->wait_connected(Clock::now() + settings.request_timeout) == ZkError::ok;
    probe->close(Clock::now() + settings.request_timeout);
    if (!serves) continue;
    bool moving = crew.sessions[index]->return_home();
    feed_book(engine, [index, moving](WatchBook& book, Moment) { book.homecoming(index, moving); });
  }
}

// Whatever this run created that its sessions did not take with them: the counters (only some when
// start() failed half-way: a missing one is no error), and the session nodes of sessions whose close
// was abandoned (under load, or during an election: the servers would remove them only when those
// sessions expire), then the run's node. Everything under it is this run's own. Through a session of
// its own, whatever became of the run's (expired, or never connected). What stays (no server
// reachable) is swept by a later watch.
void remove_run_znodes(const Crew& crew, std::vector<std::string> paths, milliseconds limit) {
  const auto& settings = crew.settings;
  auto cleaner = crew.keepers.open(settings.servers, session_options(settings.session_timeout));
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

}  // namespace

// The events the book produced go to the delivery (and the log); the stop hears that writes settled.
void Engine::pass_on_events() {
  auto taken = book.take_events();
  if (!taken.empty()) {
    if (keep) log.insert(log.end(), taken.begin(), taken.end());
    tell(delivery, [events = std::move(taken)](Delivery& out) {
      for (const auto& event : events)
        if (out.sink) out.sink(event);
    });
  }
  progress();
}

// The crew is set; a check the sessions' first events asked for starts now that it can.
void Engine::set_crew(CrewPtr given) {
  crew = std::move(given);
  maybe_check();
}

// The writer starts, the first write at once.
void Engine::begin() {
  writer.expires_at(Clock::now());
  write_once();
}

// On the strand, at the rate: the next write, the book's tick, and the sessions it widens.
void Engine::write_once() {
  if (cadence.stopped()) return;
  auto write = book.start_write();
  book.tick(now_moment());
  auto widen = book.take_sessions_to_widen(now_moment());
  pass_on_events();
  if (write) send_write(*write);
  if (!widen.empty()) {
    auto crowded = book.crowded_servers();
    for (auto session : widen) crew->sessions[session]->widen(crowded);
  }
  bring_sessions_home();
  maybe_check();
  after(cadence.next_write(writer.expiry(), Clock::now()), writer, [](Engine& self) { self.write_once(); });
}

// `then` on the strand at `at`, unless the timer is cancelled (by the stop) or set again first.
template <class Then>
void Engine::after(Clock::time_point at, boost::asio::steady_timer& timer, Then then) {
  timer.expires_at(at);
  timer.async_wait([self = self(), task = task(), then](const boost::system::error_code& error) {
    if (!error) then(*self);
  });
}

// Sets the session's counter to the write's value; the book hears the outcome on the strand.
void Engine::send_write(const WatchBook::Write& write) {
  auto done = [engine = self(), write](const StatResult& result) {
    feed_book(engine, [write, error = result.error, version = result.stat.version](WatchBook& acks, Moment now) {
      acks.write_done(write, error, version, now);
    });
  };
  crew->sessions[write.session]->set(crew->znodes[write.session].counter, std::to_string(write.value), -1, done);
}

// A session that failed over stays where it landed: the server there then holds two of the watch's
// sessions for the rest of the run, and with maxClientCnxns=3 and a read-back no connection is left
// for the checks beside the watch (roll's, step's). So it goes home, on a worker (its waits block),
// once its own server serves.
void Engine::bring_sessions_home() {
  if (!crew || !cadence.start_homing()) return;
  auto away = book.take_sessions_to_bring_home(now_moment());
  if (away.empty()) return cadence.homing_ended();
  offload(
      self(), [engine = self(), crew = crew, away] { bring_home(engine, *crew, away); },
      [](Engine& self) {
        self.cadence.homing_ended();
        self.progress();
      });
}

// After a change: the checks the book wants, on a worker (their waits block), when the cadence lets
// one start; one wanted sooner than the gap allows is started by the gap's timer.
void Engine::maybe_check() {
  if (!crew) return;
  auto decision = cadence.check(book.checks_wanted(), Clock::now());
  if (decision.start == WatchCadence::Start::later)
    return after(decision.at, check_gap, [](Engine& self) { self.maybe_check(); });
  if (decision.start == WatchCadence::Start::no) return;
  auto ephemerals = book.take_ephemeral_checks();
  bool read_back = book.take_read_back_wanted();
  offload(
      self(),
      [engine = self(), crew = crew, ephemerals, read_back] {
        check_ephemerals(engine, *crew, ephemerals);
        if (read_back) read_back_everywhere(engine, *crew, false);
      },
      [](Engine& self) {
        self.cadence.check_ended(Clock::now());
        self.progress();
        self.maybe_check();
      });
}

// The stop, one sequence on the strand: nothing new starts, then each stage of the plan in turn,
// each ended by its own completion or by its bound. The future is ready when the last has ended.
std::shared_future<void> Engine::begin_stop(const StopPlan& plan) {
  stop_sequence.emplace(plan);
  cleanup = plan.cleanup_limit.value_or(plan.request_timeout);
  cadence.stop();
  writer.cancel();
  check_gap.cancel();
  auto done = stopped.get_future().share();
  run_stage();
  return done;
}

void Engine::run_stage() {
  auto generation = ++stage_generation;
  if (stop_sequence->finished()) {
    stage_timer.cancel();
    stopped.set_value();
    return;
  }
  after(Clock::now() + stop_sequence->bound(), stage_timer,
        [generation](Engine& self) { self.stage_ended(generation, false); });
  start_stage(generation);
}

// The stages that wait on the strand (quiesce, settle) end in progress(); the others run on a worker
// or the delivery's strand and tell their end.
void Engine::start_stage(unsigned generation) {
  auto ended = [generation](Engine& self) { self.stage_ended(generation, true); };
  auto limit = cleanup;
  auto stage = stop_sequence->stage();
  bool sessions_needed = stage != StopStage::quiesce && stage != StopStage::settle && stage != StopStage::deliver;
  if (sessions_needed && !crew) return ended(*this);  // start() threw before it had sessions: none to close
  switch (stage) {
    case StopStage::quiesce:
    case StopStage::settle: return progress();
    case StopStage::final_checks:
      return offload(
          self(),
          [engine = self(), crew = crew, live = book.live_sessions()] {
            check_ephemerals(engine, *crew, live);
            read_back_everywhere(engine, *crew, true);
          },
          ended);
    case StopStage::close_sessions:
      book.closing();  // the servers delete the ephemerals: no loss
      return offload(
          self(), [crew = crew, limit] { close_all(crew->sessions, Clock::now() + limit); }, ended);
    case StopStage::remove_znodes:
      return offload(
          self(), [crew = crew, paths = book.counter_paths(), limit] { remove_run_znodes(*crew, paths, limit); },
          ended);
    case StopStage::deliver:
      pass_on_events();
      open = false;  // a callback that comes after (an abandoned close's) changes neither totals nor events
      // The delivery's strand runs this after every event handed to it before.
      return tell(delivery, [engine = self(), ended](Delivery&) { tell(engine, ended); });
    case StopStage::done: return;
  }
}

// A stage that waits on the strand ends once what it waits for is so.
void Engine::progress() {
  if (!stop_sequence || stop_sequence->finished()) return;
  auto stage = stop_sequence->stage();
  if ((stage == StopStage::quiesce && !cadence.busy()) || (stage == StopStage::settle && writes_settled()))
    stage_ended(stage_generation, true);
}

// Settling ends with the book's count, in time or not. The next stage begins after it.
void Engine::stage_ended(unsigned generation, bool in_time) {
  if (!stop_sequence || generation != stage_generation) return;  // stale: that stage already ended
  auto ended = stop_sequence->stage();
  stop_sequence->advance(in_time);
  if (ended == StopStage::settle) {
    book.settle(now_moment());
    pass_on_events();
  }
  run_stage();
}

namespace {

// Each session may fail over to one other server (the next in its order) until the book widens it
// (to any server but those holding two of them already): a server then holds at most two of them,
// plus one read-back, within maxClientCnxns=3. A session's listener reaches the engine through a
// weak reference: the engine owns the session, which owns it.
std::vector<std::shared_ptr<Keeper>> open_sessions(const WatchSettings& settings, KeeperFactory& keepers,
                                                   const std::shared_ptr<Engine>& engine) {
  auto options = session_options(settings.session_timeout);
  options.first_choices = 2;
  std::vector<std::shared_ptr<Keeper>> sessions;
  for (std::size_t i = 0; i < settings.servers.size(); ++i) {
    auto listener = [weak = std::weak_ptr<Engine>(engine), i](const SessionEvent& event) {
      if (auto alive = weak.lock())
        feed_book(alive, [i, event](WatchBook& book, Moment now) { book.session_changed(i, event, now); });
    };
    sessions.push_back(keepers.open(rotated(settings.servers, i, settings.fail_over_backwards), options, listener));
  }
  return sessions;
}

std::optional<std::string> connect_sessions(const Crew& crew, Clock::time_point deadline) {
  for (std::size_t i = 0; i < crew.sessions.size(); ++i)
    if (auto error = crew.sessions[i]->wait_connected(deadline); error != ZkError::ok)
      return fmt::format("session {} could not connect: {}", crew.znodes[i].name, to_string(error));
  return std::nullopt;
}

std::optional<std::string> create_znodes(const Crew& crew, Clock::time_point deadline) {
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

// The other run nodes with no session node under them (a watch with a live session is never
// touched) and older than sweep_age. Age is by the ensemble's clocks, each node's ctime against this
// run's node's, so this machine's clock being off does not matter.
std::vector<AbandonedRun> find_abandoned_runs(const Crew& crew, Keeper& keeper, Clock::time_point deadline) {
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

// A watch that is gone (SIGKILL, a crash, a lost machine, a cleanup that could not reach the
// ensemble) leaves its run node and counters behind; its sessions took their session nodes with
// them. Sweeping is best effort, bounded by one request timeout: what stays is swept next time.
void sweep_abandoned_runs(const std::shared_ptr<Engine>& engine, const Crew& crew) {
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
    feed_book(engine, [run = runs[i]](WatchBook& book, Moment now) {
      book.run_swept(run.path, run.children.size(), run.age, now);
    });
  }
}

}  // namespace

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

// The crew is made here, before anything that reads it is posted, and shared as const from then on.
std::optional<std::string> WatchEngine::start(Clock::time_point deadline) {
  if (settings_.servers.empty()) return "no servers to watch";
  auto started = now_moment();
  auto run_path = fmt::format("{}/watch/{}-{}-{}", settings_.namespace_path, local_host_name(), getpid(),
                              duration_cast<milliseconds>(started.wall.time_since_epoch()).count());
  std::vector<std::string> names;
  for (const auto& server : settings_.servers) names.push_back(server.name);
  WatchBook book(std::move(names), run_path, settings_.rate, started);
  auto znodes = znodes_of(book);
  engine_ =
      std::make_shared<Engine>(executor_, std::move(book), settings_.rate, settings_.keep_events, std::move(sink_));
  auto sessions = open_sessions(settings_, keepers_, engine_);
  auto crew = std::make_shared<const Crew>(Crew{settings_, keepers_, run_path, std::move(znodes), std::move(sessions)});
  tell(engine_, [crew](Engine& self) { self.set_crew(crew); });  // before anything that reads it

  if (auto error = connect_sessions(*crew, deadline)) return error;
  created_ = true;
  if (auto error = create_znodes(*crew, deadline)) return error;
  sweep_abandoned_runs(engine_, *crew);
  running_ = true;
  tell(engine_, [](Engine& self) { self.begin(); });
  return std::nullopt;
}

void WatchEngine::stop_quickly(std::chrono::milliseconds step_limit) {
  final_checks_ = false;
  cleanup_limit_ = step_limit;
  stop();
}

// The one wait of the command's thread for the stop: its stages' bounds, and a second for the
// executor's own latency.
void WatchEngine::stop() {
  if (!engine_ || stopped_) return;
  stopped_ = true;
  StopPlan plan{running_, final_checks_, created_, settings_.request_timeout, cleanup_limit_};
  auto deadline = Clock::now() + WatchStop(plan).total_bound() + std::chrono::seconds(1);
  auto done = ask_now(engine_, [plan](Engine& self) { return self.begin_stop(plan); });
  done.wait_until(deadline);
}

std::chrono::milliseconds WatchEngine::take_longest_unavailable() {
  if (!engine_) return std::chrono::milliseconds(0);
  return ask_now(engine_, [](Engine& self) { return self.book.take_longest_unavailable(now_moment()); });
}

WatchTotals WatchEngine::totals() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) { return self.book.totals(); });
}

std::vector<WatchEvent> WatchEngine::events() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) { return self.log; });
}

std::vector<StopStage> WatchEngine::stop_abandoned() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) {
    return self.stop_sequence ? self.stop_sequence->abandoned() : std::vector<StopStage>{};
  });
}

}  // namespace zkverify::probes
