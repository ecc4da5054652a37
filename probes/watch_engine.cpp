#include "probes/watch_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/steady_timer.hpp>

#include "model/books/watch_cadence.hpp"
#include "model/facts/addresses.hpp"
#include "model/judge/client_changes.hpp"
#include "probes/actor.hpp"
#include "probes/client_reads.hpp"
#include "probes/host.hpp"
#include "probes/notice_wait.hpp"
#include "probes/watch_crew.hpp"

namespace zkverify::probes {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

Moment now_moment() { return {Clock::now(), std::chrono::system_clock::now()}; }

// The events on their way to the sink, an actor of their own: a sink that is slow holds up this
// strand only, never the engine's or the sessions'.
struct Delivery : ActorCore {
  Delivery(Executor& executor, WatchEngine::Sink events_sink) : ActorCore(executor), sink(std::move(events_sink)) {}
  WatchEngine::Sink sink;
};

using CrewPtr = std::shared_ptr<const WatchCrew>;

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
        follow_timer(strand()),
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
  void follow();
  void followed(FollowRound round);
  void settle_awaiting();
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
  boost::asio::steady_timer follow_timer;  // --clients: the next round while no watch is set
  bool following = false;                  // from begin(): the first look is in
  ClientsFollowed clients;
  RegistrationLog client_log;
  // await_registrations()'s: the paths each waits for, and its wait, settled once all are held.
  std::vector<std::pair<std::vector<std::string>, std::shared_ptr<NoticeWait>>> awaiting;
  std::shared_ptr<Delivery> delivery;
};

namespace {

using Engine = WatchEngine::Engine;

template <class Change>
void feed_book(const std::shared_ptr<Engine>& engine, Change change) {
  tell(engine, [change = std::move(change)](Engine& self) mutable { self.feed(change); });
}

// The crew's work reaches the book through the engine: a Task each tell, an answer each ask.
BookLink link_to(const std::shared_ptr<Engine>& engine) {
  return {[engine](std::function<void(WatchBook&, Moment)> change) { feed_book(engine, std::move(change)); },
          [engine] { return ask_now(engine, [](Engine& self) { return self.book.acked_so_far(); }); }};
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

// The writer starts, the first write at once; so does following the clients, now that the first
// look is in (the sessions' first connections come before it, and ask for rounds too).
void Engine::begin() {
  writer.expires_at(Clock::now());
  write_once();
  following = true;
  follow();
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
      self(), [link = link_to(self()), crew = crew, away] { bring_home(link, *crew, away); },
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
      [link = link_to(self()), crew = crew, ephemerals, read_back] {
        check_ephemerals(link, *crew, ephemerals);
        if (read_back) read_back_everywhere(link, *crew, false);
      },
      [](Engine& self) {
        self.cadence.check_ended(Clock::now());
        self.progress();
        self.maybe_check();
      });
}

// --clients: a round of following on a worker (its reads block), through a session connected now.
// A watch that fires asks for the next; while none could be set (no session connected, nothing
// there yet), a timer does, each second.
void Engine::follow() {
  if (!following || crew->settings.client_paths.empty() || !cadence.start_follow()) return;
  auto session = book.connected_session();
  if (!session) {
    (void)cadence.follow_ended();
    return after(Clock::now() + std::chrono::seconds(1), follow_timer, [](Engine& self) { self.follow(); });
  }
  offload(
      self(),
      [weak = std::weak_ptr<Engine>(self()), crew = crew, session = *session] {
        auto changed = [weak] {
          if (auto alive = weak.lock()) tell(alive, [](Engine& self) { self.follow(); });
        };
        return follow_round(*crew->sessions[session], crew->settings.client_paths, changed,
                            Clock::now() + crew->settings.request_timeout);
      },
      [](Engine& self, FollowRound round) { self.followed(std::move(round)); });
}

// A round's reads: each change an event, the absences logged; then the next round, if one is due.
void Engine::followed(FollowRound round) {
  bool again = cadence.follow_ended();
  if (!open) return;
  auto now = now_moment();
  client_log.look(round.reads, now);
  for (auto& change : client_events(clients.first, clients.last, round.reads))
    book.client_seen(change.kind, std::move(change.detail), now);
  remember_client_reads(clients.last, round.reads);
  clients.now = std::move(round.reads);
  settle_awaiting();
  pass_on_events();
  if (again) follow();
  else if (round.watching == 0)
    after(Clock::now() + std::chrono::seconds(1), follow_timer, [](Engine& self) { self.follow(); });
}

// The waits whose registrations are all held now, as the last reads have them, end.
void Engine::settle_awaiting() {
  auto held = [this](const std::string& path) {
    return std::ranges::any_of(clients.last, [&](const ClientPathRead& read) {
      return std::ranges::find(read.held, path, &Registration::path) != read.held.end();
    });
  };
  std::erase_if(awaiting, [&](const auto& wait) {
    if (!std::ranges::all_of(wait.first, held)) return false;
    wait.second->notice({});
    return true;
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
  follow_timer.cancel();
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
          [link = link_to(self()), crew = crew, live = book.live_sessions()] {
            check_ephemerals(link, *crew, live);
            read_back_everywhere(link, *crew, true);
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
  // A session's listener reaches the engine through a weak reference: the engine owns the session,
  // which owns it.
  auto sessions = open_watch_sessions(
      settings_, keepers_, [weak = std::weak_ptr<Engine>(engine_)](std::size_t i, const SessionEvent& event) {
        auto alive = weak.lock();
        if (!alive) return;
        feed_book(alive, [i, event](WatchBook& of_run, Moment now) { of_run.session_changed(i, event, now); });
        // A session back (its watches set again) or gone (its watches with it): look again.
        if (event.state == SessionState::connected || event.state == SessionState::expired)
          tell(alive, [](Engine& self) { self.follow(); });
      });
  auto crew = std::make_shared<const WatchCrew>(
      WatchCrew{settings_, keepers_, run_path, std::move(znodes), std::move(sessions)});
  tell(engine_, [crew](Engine& self) { self.set_crew(crew); });  // before anything that reads it

  if (auto error = connect_sessions(*crew, deadline)) return error;
  created_ = true;
  if (auto error = create_znodes(*crew, deadline)) return error;
  sweep_abandoned_runs(link_to(engine_), *crew);
  if (!settings_.client_paths.empty()) {
    auto first = read_client_paths(*crew->sessions.front(), settings_.client_paths, deadline);
    tell(engine_, [first = std::move(first)](Engine& self) {
      self.client_log.look(first, now_moment());
      self.clients.first = self.clients.now = first;
      remember_client_reads(self.clients.last, first);
    });
  }
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

ClientsFollowed WatchEngine::clients() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) {
    auto copy = self.clients;
    copy.absences = self.client_log.absences();
    return copy;
  });
}

std::vector<ClientPathRead> WatchEngine::await_registrations(const std::vector<std::string>& awaited,
                                                             Clock::time_point deadline, StopSignals* signals,
                                                             int nth) {
  if (!engine_) return {};
  auto back = std::make_shared<NoticeWait>();
  tell(engine_, [awaited, back](Engine& self) {
    self.awaiting.emplace_back(awaited, back);
    self.settle_awaiting();  // already held
    self.follow();           // and a look now, not only at the next change
  });
  back->wait(deadline, signals, nth);
  return ask_now(engine_, [back](Engine& self) {
    std::erase_if(self.awaiting, [&](const auto& wait) { return wait.second == back; });
    return self.clients.last;
  });
}

std::vector<StopStage> WatchEngine::stop_abandoned() const {
  if (!engine_) return {};
  return ask_now(engine_, [](Engine& self) {
    return self.stop_sequence ? self.stop_sequence->abandoned() : std::vector<StopStage>{};
  });
}

}  // namespace zkverify::probes
