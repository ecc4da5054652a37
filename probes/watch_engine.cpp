#include "probes/watch_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "model/facts/addresses.hpp"
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

}  // namespace

// A run node of another watch that the sweep may remove: only counters under it, and old enough.
struct WatchEngine::AbandonedRun {
  std::string path;
  std::vector<std::string> children;
  milliseconds age{0};  // its ctime before this run's
};

// The book behind one mutex, and the events it produced on their way to the sink (delivered on a
// strand of their own, in order, outside the lock). Callbacks of the sessions only feed the book and queue
// events here: they never wait for the sink or for I/O.
struct WatchEngine::Shared : std::enable_shared_from_this<WatchEngine::Shared> {
  Shared(WatchBook watch_book, const boost::asio::any_io_executor& executor, Sink events_sink)
      : book(std::move(watch_book)),
        strand(boost::asio::make_strand(executor)),
        writer(strand),
        check_gap(strand),
        events(boost::asio::make_strand(executor)),
        sink(std::move(events_sink)) {}

  // Applies `change` to the book, with the time read under the lock (so the book sees time move
  // forward), queues the events it produced, and starts the checks the book asks for.
  template <class Change>
  void feed(Change change) {
    {
      std::lock_guard lock(mutex);
      if (!open) return;
      change(book, now_moment());
      queue_events();
    }
    with_engine([](WatchEngine& running) { running.maybe_check(); });
  }

  // Runs `call` on the engine unless stop() has detached it: the sessions' callbacks, the timers and
  // the workers reach the engine only through here, so none touches it once stop() has returned.
  template <class Call>
  void with_engine(Call call) {
    {
      std::lock_guard lock(link_mutex);
      if (!engine) return;
      ++calls_in_engine;
    }
    call(*engine);
    std::lock_guard lock(link_mutex);
    if (--calls_in_engine == 0) link_changed.notify_all();
  }

  // Once stop() is done: no call reaches the engine after this returns. Those in progress are
  // waited for; each is short or bounded by the request timeout (a check on a worker).
  void detach_engine() {
    std::unique_lock lock(link_mutex);
    engine = nullptr;
    link_changed.wait(lock, [&] { return calls_in_engine == 0; });
  }

  // Asks the book something that changes nothing.
  template <class Question>
  auto ask(Question question) {
    std::lock_guard lock(mutex);
    return question(std::as_const(book));
  }

  // With the lock held. Every change wakes every waiter; each re-checks what it waits for. The
  // events go to the sink on the strand, batch after batch, so the book's order is kept.
  void queue_events() {
    auto taken = book.take_events();
    changed.notify_all();
    if (taken.empty()) return;
    outbox.insert(outbox.end(), std::make_move_iterator(taken.begin()), std::make_move_iterator(taken.end()));
    boost::asio::post(events, [self = shared_from_this()] { self->deliver(); });
  }

  // On the events' strand: what is queued, to the sink.
  void deliver() {
    std::vector<WatchEvent> batch;
    {
      std::lock_guard lock(mutex);
      batch = std::exchange(outbox, {});
    }
    for (const auto& event : batch)
      if (sink) sink(event);
  }

  std::mutex mutex;  // guards everything below but the strand's own
  std::condition_variable changed;
  WatchBook book;
  std::vector<WatchEvent> outbox;  // in the book's order, not yet given to the sink
  bool open = true;                // false once stop() ended: callbacks after it change nothing
  bool stopping = false;           // the writer and the checks are to end
  bool checking = false;           // a check runs on a worker
  Clock::time_point next_check{};  // at most two checks a second, whatever flaps
  // The engine, while it runs; reached through with_engine() only.
  std::mutex link_mutex;
  std::condition_variable link_changed;
  WatchEngine* engine = nullptr;
  int calls_in_engine = 0;
  boost::asio::strand<boost::asio::any_io_executor> strand;
  boost::asio::steady_timer writer;     // on the strand
  boost::asio::steady_timer check_gap;  // on the strand
  // The sink's own strand: a sink that blocks (stdout to a reader that stalls) holds up one io
  // thread, never the writer's strand or the sessions'.
  boost::asio::strand<boost::asio::any_io_executor> events;
  Sink sink;
};

// One server's read-back in flight: the acks it must find, and the sync and reads sent after it.
struct WatchEngine::PendingRead {
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
  run_path_ = fmt::format("{}/watch/{}-{}-{}", settings_.namespace_path, local_host_name(), getpid(),
                          duration_cast<milliseconds>(started.wall.time_since_epoch()).count());
  std::vector<std::string> names;
  for (const auto& server : settings_.servers) names.push_back(server.name);
  WatchBook book(std::move(names), run_path_, settings_.rate, started);
  for (std::size_t i = 0; i < book.session_count(); ++i)
    znodes_.push_back({book.session_name(i), book.ephemeral_path(i), book.counter_path(i)});
  shared_ = std::make_shared<Shared>(std::move(book), executor_.io().get_executor(), std::move(sink_));
  shared_->engine = this;

  open_sessions();
  if (auto error = connect_sessions(deadline)) return error;
  if (auto error = create_znodes(deadline)) return error;
  sweep_abandoned_runs();
  running_ = true;
  shared_->writer.expires_at(Clock::now());  // the first write's time: no handler runs yet
  boost::asio::post(shared_->strand,
                    [shared = shared_] { shared->with_engine([](WatchEngine& running) { running.write_once(); }); });
  return std::nullopt;
}

// Each session may fail over to one other server (the next in its order) until the book widens it:
// a server then holds at most two of them, plus one read-back, within maxClientCnxns=3.
void WatchEngine::open_sessions() {
  auto options = session_options(settings_.session_timeout);
  options.first_choices = 2;
  for (std::size_t i = 0; i < settings_.servers.size(); ++i) {
    // On the keeper's thread: feeds the book and returns, as a listener must.
    auto listener = [shared = shared_, i](const SessionEvent& event) {
      shared->feed([&](WatchBook& book, Moment now) { book.session_changed(i, event, now); });
    };
    sessions_.push_back(keepers_.open(rotated(settings_.servers, i, settings_.fail_over_backwards), options, listener));
  }
}

std::optional<std::string> WatchEngine::connect_sessions(Clock::time_point deadline) {
  for (std::size_t i = 0; i < sessions_.size(); ++i)
    if (auto error = sessions_[i]->wait_connected(deadline); error != ZkError::ok)
      return fmt::format("session {} could not connect: {}", znodes_[i].name, to_string(error));
  return std::nullopt;
}

std::optional<std::string> WatchEngine::create_znodes(Clock::time_point deadline) {
  auto& first = *sessions_.front();
  creates_sent_ = true;
  for (const auto& path : {settings_.namespace_path, settings_.namespace_path + "/watch", run_path_}) {
    auto error = create_now(first, path, "", CreateMode::persistent, deadline).error;
    if (error != ZkError::ok && error != ZkError::node_exists)
      return fmt::format("cannot create {}: {}", path, to_string(error));
  }
  for (std::size_t i = 0; i < sessions_.size(); ++i) {
    auto& session = *sessions_[i];
    const auto& znodes = znodes_[i];
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
  auto& keeper = *sessions_.front();
  auto runs = find_abandoned_runs(keeper, deadline);
  std::vector<Expect<MultiResult>> removals(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    keeper.multi(sweep_ops(runs[i].path, runs[i].children), removals[i].callback());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // Any error leaves the node be: not_empty (a session node appeared), no_node (another watch
    // swept it first), or no answer.
    if (removals[i].await(deadline).error != ZkError::ok) continue;
    const auto& run = runs[i];
    shared_->feed([&](WatchBook& book, Moment now) { book.run_swept(run.path, run.children.size(), run.age, now); });
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
  keeper.exists(run_path_, ours.callback());
  auto listed = listing.await(deadline);
  auto reference = ours.await(deadline);
  if (listed.error != ZkError::ok || reference.error != ZkError::ok) return {};
  std::vector<std::string> paths;
  std::vector<Expect<ChildrenResult>> children;
  std::vector<Expect<StatResult>> stats;
  for (const auto& name : listed.children) {
    auto path = fmt::format("{}/{}", parent, name);
    if (path == run_path_) continue;
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

// On the strand, at the rate: the next write, the book's tick, and the sessions it widens. After a
// stall (SIGSTOP, say) there is no burst to catch up.
void WatchEngine::write_once() {
  auto& shared = *shared_;
  std::optional<WatchBook::Write> write;
  std::vector<std::size_t> widen;
  {
    std::lock_guard lock(shared.mutex);
    if (shared.stopping) return;
    write = shared.book.start_write();
    shared.book.tick(now_moment());
    widen = shared.book.take_sessions_to_widen(now_moment());
    shared.queue_events();
  }
  if (write) send_write(*write);  // the session's own locks are never taken under ours
  for (auto session : widen) sessions_[session]->widen();
  maybe_check();
  auto interval = duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / settings_.rate));
  schedule_write(std::max(shared.writer.expiry() + interval, Clock::now()));
}

void WatchEngine::schedule_write(Clock::time_point at) {
  shared_->writer.expires_at(at);
  shared_->writer.async_wait([shared = shared_](const boost::system::error_code& error) {
    if (!error) shared->with_engine([](WatchEngine& running) { running.write_once(); });
  });
}

// Sets the session's counter to the write's value; the book hears the outcome on the keeper's thread.
void WatchEngine::send_write(const WatchBook::Write& write) {
  auto done = [shared = shared_, write](const StatResult& result) {
    shared->feed([&](WatchBook& book, Moment now) { book.write_done(write, result.error, result.stat.version, now); });
  };
  sessions_[write.session]->set(znodes_[write.session].counter, std::to_string(write.value), -1, done);
}

// After a change: when the book wants checks and none runs, one runs on a worker (its waits block),
// at most two a second whatever flaps; a check wanted sooner is started by the gap's timer.
void WatchEngine::maybe_check() {
  auto& shared = *shared_;
  auto now = Clock::now();
  {
    std::lock_guard lock(shared.mutex);
    if (shared.stopping || shared.checking || !shared.book.checks_wanted()) return;
    if (now < shared.next_check) {
      boost::asio::post(shared.strand, [shared = shared_, at = shared.next_check] {
        if (std::lock_guard stopping_lock(shared->mutex); shared->stopping) return;  // stop() cancelled the gap
        shared->check_gap.expires_at(at);
        shared->check_gap.async_wait([shared](const boost::system::error_code& error) {
          if (!error) shared->with_engine([](WatchEngine& running) { running.maybe_check(); });
        });
      });
      return;
    }
    shared.checking = true;
  }
  executor_.run_blocking(
      [shared = shared_] { shared->with_engine([](WatchEngine& running) { running.check_once(); }); });
}

void WatchEngine::check_once() {
  auto& shared = *shared_;
  std::vector<std::size_t> ephemerals;
  bool read_back = false;
  {
    std::lock_guard lock(shared.mutex);
    ephemerals = shared.book.take_ephemeral_checks();
    read_back = shared.book.take_read_back_wanted();
  }
  check_ephemerals(ephemerals);
  if (read_back) read_back_everywhere(false);
  {
    std::lock_guard lock(shared.mutex);
    shared.checking = false;
    shared.next_check = Clock::now() + milliseconds(500);
    shared.changed.notify_all();
  }
  maybe_check();
}

void WatchEngine::check_ephemerals(const std::vector<std::size_t>& sessions) {
  auto deadline = Clock::now() + settings_.request_timeout;
  std::vector<Expect<StatResult>> checks(sessions.size());
  for (std::size_t i = 0; i < sessions.size(); ++i)
    sessions_[sessions[i]]->exists(znodes_[sessions[i]].ephemeral, checks[i].callback());
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto error = checks[i].await(deadline).error;
    shared_->feed([&](WatchBook& book, Moment now) { book.ephemeral_checked(sessions[i], error, now); });
  }
}

// Through a session pinned to each server, all at once: sync, then every session's counter, judged
// against the acks recorded before that server's read was sent.
void WatchEngine::read_back_everywhere(bool final) {
  auto pinned = open_pinned(keepers_, settings_.servers, session_options(settings_.session_timeout));
  // The sessions connect at the same time, so waiting for each in turn costs one timeout in all;
  // the reads then get a deadline of their own, so a server that is down (and uses up the
  // connection wait) does not leave the others no time to read.
  auto connected_by = Clock::now() + settings_.request_timeout;
  std::vector<PendingRead> reads;
  for (auto& session : pinned) reads.push_back(start_read(*session, connected_by));
  auto deadline = Clock::now() + settings_.request_timeout;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    auto read = reads[i].collect(settings_.servers[i].name, deadline);
    shared_->feed([&](WatchBook& book, Moment now) { book.read_back_done(reads[i].before, read, final, now); });
  }
  close_all(pinned, Clock::now() + settings_.request_timeout);
}

// Sends the sync and the reads without waiting: one session's requests are answered in order, so
// every read comes after the sync.
WatchEngine::PendingRead WatchEngine::start_read(Keeper& pinned, Clock::time_point deadline) {
  PendingRead read;
  read.error = pinned.wait_connected(deadline);
  if (read.error != ZkError::ok) return read;
  read.before = shared_->ask([](const WatchBook& book) { return book.acked_so_far(); });
  std::vector<std::string> paths;
  for (const auto& znodes : znodes_) paths.push_back(znodes.counter);
  read.counters.emplace(pinned, run_path_, paths);
  return read;
}

void WatchEngine::stop_quickly(std::chrono::milliseconds step_limit) {
  final_checks_ = false;
  cleanup_limit_ = step_limit;
  stop();
}

void WatchEngine::stop() {
  if (!shared_ || stopped_) return;
  stopped_ = true;
  stop_writing_and_checking();
  if (running_ && final_checks_) finish_run();
  close_sessions();
  if (creates_sent_) remove_run_znodes();
  end_delivery();
  shared_->detach_engine();
}

// The writer's timer is cancelled on its strand; a check in progress on a worker is waited for (its
// steps are bounded by the request timeout).
void WatchEngine::stop_writing_and_checking() {
  auto& shared = *shared_;
  std::unique_lock lock(shared.mutex);
  shared.stopping = true;
  boost::asio::post(shared.strand, [shared = shared_] {
    shared->writer.cancel();
    shared->check_gap.cancel();
  });
  shared.changed.wait_until(lock, Clock::now() + 4 * settings_.request_timeout, [&] { return !shared.checking; });
}

// The final checks.
void WatchEngine::finish_run() {
  settle_writes();
  check_ephemerals(live_sessions());
  read_back_everywhere(true);
}

// Writes still in flight get a moment to be acknowledged (or fail) before the final count.
void WatchEngine::settle_writes() {
  auto& shared = *shared_;
  std::unique_lock lock(shared.mutex);
  shared.changed.wait_until(lock, Clock::now() + settings_.request_timeout,
                            [&] { return shared.book.writes_in_flight() == 0; });
  shared.book.settle(now_moment());
  shared.queue_events();
}

void WatchEngine::close_sessions() {
  shared_->feed([](WatchBook& book, Moment) { book.closing(); });
  close_all(sessions_,
            Clock::now() + cleanup_limit_.value_or(settings_.request_timeout));  // the servers delete the ephemerals
  sessions_.clear();
}

// Whatever this run created that its sessions did not take with them: the counters (only some when
// start() failed half-way: a missing one is no error), then the run's node, which can go once the closed
// sessions' nodes are gone. Through a session of its own, whatever became of the run's (expired,
// or never connected). What stays (no server reachable; a close abandoned, so its session node
// stays until the session expires) is swept by a later watch.
void WatchEngine::remove_run_znodes() {
  auto cleaner = keepers_.open(settings_.servers, session_options(settings_.session_timeout));
  auto limit = cleanup_limit_.value_or(settings_.request_timeout);
  auto deadline = Clock::now() + limit;
  if (cleaner->wait_connected(deadline) == ZkError::ok) {
    remove_all_now(*cleaner, shared_->ask([](const WatchBook& book) { return book.counter_paths(); }), deadline);
    remove_now(*cleaner, run_path_, deadline);
    remove_now(*cleaner, settings_.namespace_path + "/watch", deadline);  // fails harmlessly while another watch runs
  }
  cleaner->close(Clock::now() + limit);
}

// Delivers what is queued, then closes the book: a callback that comes after stop() (an abandoned
// close's) changes neither the totals nor what the sink saw. The strand runs its tasks in order, so
// once the last one ran every event has reached the sink.
void WatchEngine::end_delivery() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->open = false;
  }
  auto delivered = std::make_shared<std::promise<void>>();
  auto done = delivered->get_future();
  boost::asio::post(shared_->events, [shared = shared_, delivered] {
    shared->deliver();
    delivered->set_value();
  });
  done.wait_until(Clock::now() + settings_.request_timeout);
}

std::vector<std::size_t> WatchEngine::live_sessions() const {
  return shared_->ask([](const WatchBook& book) { return book.live_sessions(); });
}

std::chrono::milliseconds WatchEngine::take_longest_unavailable() {
  std::chrono::milliseconds longest{0};
  if (shared_) shared_->feed([&](WatchBook& book, Moment now) { longest = book.take_longest_unavailable(now); });
  return longest;
}

WatchTotals WatchEngine::totals() const {
  if (!shared_) return {};
  return shared_->ask([](const WatchBook& book) { return book.totals(); });
}

}  // namespace zkverify::probes
