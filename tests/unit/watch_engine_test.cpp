// The watch engine, the thin driver around WatchBook, against the fake ensemble: real threads and
// callbacks, injected faults, no JVM.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <csignal>

#include <catch2/catch.hpp>

#include "fake_keeper.hpp"
#include "probes/watch_engine.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using std::chrono::milliseconds;
using Kind = WatchEventKind;

namespace {

// Short runs: 50 writes a second, short timeouts.
WatchSettings quick_settings() {
  WatchSettings settings;
  settings.servers = parse_server_list("s1=127.0.0.1:2181,s2=127.0.0.1:2182,s3=127.0.0.1:2183");
  settings.rate = 50;
  settings.session_timeout = milliseconds(2000);
  settings.request_timeout = milliseconds(400);
  return settings;
}

// Waits (at most 10 s) until `count` writes (sets) went through `server` (empty: any): the engine has
// run that far. True when they had.
bool written(const zkverify::fake::Ensemble& ensemble, const std::string& server, int count) {
  return ensemble.wait_for_operations(zkverify::fake::OpKind::set, server, count,
                                      Clock::now() + std::chrono::seconds(10));
}

zkverify::fake::Rule rule(const std::string& server, zkverify::fake::OpKind op, zkverify::fake::Fault fault,
                          int nth = 0) {
  zkverify::fake::Rule rule;
  rule.server = server;
  rule.op = op;
  rule.fault = fault;
  rule.nth = nth;
  return rule;
}

// The events the engine delivered, as its sink saw them.
class Recorder {
 public:
  WatchEngine::Sink sink() {
    return [this](const WatchEvent& event) {
      std::lock_guard lock(mutex_);
      events_.push_back(event);
      delivered_.notify_all();
    };
  }

  bool wait_for(Kind kind, milliseconds timeout, long count = 1) {
    std::unique_lock lock(mutex_);
    return delivered_.wait_for(lock, timeout, [&] { return count_locked(kind) >= count; });
  }

  std::size_t count() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }

  std::vector<WatchEvent> of(Kind kind) const {
    std::lock_guard lock(mutex_);
    std::vector<WatchEvent> matching;
    std::ranges::copy_if(events_, std::back_inserter(matching), [&](const WatchEvent& e) { return e.kind == kind; });
    return matching;
  }

 private:
  long count_locked(Kind kind) const {
    return std::ranges::count_if(events_, [&](const WatchEvent& e) { return e.kind == kind; });
  }

  mutable std::mutex mutex_;
  std::condition_variable delivered_;
  std::vector<WatchEvent> events_;
};

bool under(const std::string& path, const std::string& root) { return path.rfind(root, 0) == 0; }

std::unique_ptr<Keeper> connected_session(zkverify::fake::Ensemble& ensemble) {
  auto session = ensemble.factory().open(parse_server_list("s1=127.0.0.1:2181"), {});
  REQUIRE(session->wait_connected(Clock::now() + milliseconds(1000)) == ZkError::ok);
  return session;
}

// A "Kafka broker": a session of its own that holds /brokers/ids/ID.
std::unique_ptr<Keeper> registered_broker(zkverify::fake::Ensemble& ensemble, int id) {
  auto broker = connected_session(ensemble);
  auto deadline = Clock::now() + milliseconds(1000);
  for (const auto* path : {"/brokers", "/brokers/ids"}) create_now(*broker, path, "", CreateMode::persistent, deadline);
  REQUIRE(create_now(*broker, "/brokers/ids/" + std::to_string(id), "", CreateMode::ephemeral, deadline).error ==
          ZkError::ok);
  return broker;
}

// quick_settings(), following the brokers' registrations (--clients /brokers/ids).
WatchSettings following_brokers() {
  auto settings = quick_settings();
  settings.client_paths = {"/brokers/ids"};
  return settings;
}

// The znodes of another watch, made through `owner`: its run node and two counters, and, with
// `with_session`, a session node, which lives as long as `owner`'s session.
std::string plant_run(Keeper& owner, const std::string& name, bool with_session) {
  auto deadline = Clock::now() + milliseconds(1000);
  auto run = "/zkverify/watch/" + name;
  create_now(owner, "/zkverify", "", CreateMode::persistent, deadline);
  create_now(owner, "/zkverify/watch", "", CreateMode::persistent, deadline);
  REQUIRE(create_now(owner, run, "", CreateMode::persistent, deadline).error == ZkError::ok);
  for (const auto& counter : {"/counter-s1", "/counter-s2"})
    REQUIRE(create_now(owner, run + counter, "7", CreateMode::persistent, deadline).error == ZkError::ok);
  if (with_session)
    REQUIRE(create_now(owner, run + "/session-s1", "s1", CreateMode::ephemeral, deadline).error == ZkError::ok);
  return run;
}

}  // namespace

TEST_CASE("watch engine: a healthy run writes, reads every write back and leaves nothing behind") {
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  auto run_path = engine.totals().run_path;
  CHECK(ensemble.has_node(run_path + "/session-s2"));
  CHECK(ensemble.data_of(run_path + "/counter-s3").has_value());
  REQUIRE(written(ensemble, "", 8));
  engine.stop();

  auto totals = engine.totals();
  CHECK(totals.sessions == 3);
  CHECK(totals.writes_acked > 5);
  CHECK(totals.writes_acked == totals.writes_attempted);
  CHECK(totals.writes_lost == 0);
  CHECK(totals.read_checks == 3);
  CHECK(totals.stale_reads == 0);
  CHECK(totals.sessions_expired == 0);
  CHECK(recorder.of(Kind::connected).size() == 3);
  auto checks = recorder.of(Kind::read_check);
  REQUIRE(checks.size() == 3);
  for (const auto& check : checks) CHECK_THAT(check.detail, EndsWith("acknowledged writes present (final)"));

  CHECK_FALSE(ensemble.has_node(run_path));
  CHECK_FALSE(ensemble.has_node("/zkverify/watch"));
  CHECK(std::ranges::none_of(ensemble.paths(), [&](const std::string& path) { return under(path, run_path); }));
  CHECK(ensemble.sessions_open() == 0);
}

TEST_CASE("watch engine: a server that is down costs its own read-back only, not the others'") {
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(written(ensemble, "", 3));
  ensemble.set_down("s1");                       // the first listed: a read-back session pinned to it never connects
  ensemble.delay_completions(milliseconds(20));  // answers take time, as a server's do
  engine.stop();

  auto checks = recorder.of(Kind::read_check);
  CHECK(checks.size() == 2);  // s2 and s3 still read every acknowledged write back
  for (const auto& check : checks) CHECK(check.server != "s1");
  auto skipped = recorder.of(Kind::read_skipped);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped.front().server == "s1");
  CHECK(engine.totals().writes_lost == 0);
}

TEST_CASE("watch engine: a counter gone after sync is acknowledged writes lost, not a skipped read") {
  // As after a restart of every server without their transaction logs: the node is not there.
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  auto counter = engine.totals().run_path + "/counter-s2";
  REQUIRE(written(ensemble, "s2", 2));  // its second write started: the first was acknowledged
  auto eraser = ensemble.factory().open(parse_server_list("s3=127.0.0.1:2183"), {});
  REQUIRE(eraser->wait_connected(Clock::now() + milliseconds(1000)) == ZkError::ok);
  REQUIRE(remove_now(*eraser, counter, Clock::now() + milliseconds(1000)) == ZkError::ok);
  eraser->close(Clock::now() + milliseconds(1000));
  engine.stop();

  CHECK(engine.totals().writes_lost > 0);
  CHECK(engine.totals().stale_reads == 3);  // every server's final read-back misses them
  CHECK(recorder.of(Kind::read_skipped).empty());
  auto stale = recorder.of(Kind::stale_read);
  REQUIRE_FALSE(stale.empty());
  CHECK_THAT(stale.front().detail, Contains("of session s2"));
}

TEST_CASE("watch engine: a session the ensemble expires is reported once and writes no more") {
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(written(ensemble, "s2", 1));
  ensemble.expire_sessions_on("s2");
  REQUIRE(recorder.wait_for(Kind::expired, milliseconds(1000)));
  auto writes_when_expired = ensemble.operations(zkverify::fake::OpKind::set, "s2");
  // The others write three times more meanwhile: time enough for s2 to have written, had it gone on.
  REQUIRE(written(ensemble, "s1", ensemble.operations(zkverify::fake::OpKind::set, "s1") + 3));
  engine.stop();

  auto expired = recorder.of(Kind::expired);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].session == "s2");
  auto totals = engine.totals();
  CHECK(totals.sessions_expired == 1);
  CHECK(totals.ephemerals_lost == 1);
  CHECK(totals.writes_lost == 0);
  CHECK(ensemble.operations(zkverify::fake::OpKind::set, "s2") == writes_when_expired);
}

// s1 serves throughout: the session that lost its connection there goes back once it landed on s2.
TEST_CASE("watch engine: a connection lost on a write fails it, reconnects, and loses nothing") {
  zkverify::fake::Ensemble ensemble;
  ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(5000), 2));  // on s2, then back on s1
  REQUIRE(recorder.wait_for(Kind::read_check, milliseconds(2000)));      // a read-back after them
  engine.stop();

  // The injected loss fails one write; on a loaded host the writer's next turn on s1 can come
  // before it reconnects, and fail too: each failure is that lost connection's, and none loses a write.
  auto failed = recorder.of(Kind::write_failed);
  REQUIRE_FALSE(failed.empty());
  for (const auto& failure : failed) CHECK_THAT(failure.detail, EndsWith("failed: connection_loss"));
  auto disconnected = recorder.of(Kind::disconnected);
  REQUIRE(disconnected.size() == 1);
  CHECK(disconnected[0].session == "s1");
  auto reconnected = recorder.of(Kind::reconnected);
  REQUIRE(reconnected.size() == 2);
  CHECK(reconnected[0].session == "s1");
  CHECK(reconnected[0].server == "s2");  // its next server
  CHECK(reconnected[1].session == "s1");
  CHECK(reconnected[1].server == "s1");
  CHECK_THAT(reconnected[1].detail, StartsWith("back on its own server"));
  auto totals = engine.totals();
  CHECK(totals.writes_failed == static_cast<int>(failed.size()));
  CHECK(totals.writes_lost == 0);
  CHECK(totals.stale_reads == 0);
  // Through 3 servers after the reconnects (once, or twice when the move home came after the first
  // read-back began) and at the end.
  CHECK(totals.read_checks >= 6);
  CHECK(totals.read_checks % 3 == 0);
  CHECK(totals.ephemerals_lost == 0);
}

TEST_CASE(
    "watch engine: a displaced session tries one other server, and every server once a third of "
    "the session timeout has passed") {
  zkverify::fake::Ensemble ensemble;
  auto settings = quick_settings();
  settings.servers = parse_server_list("s1=127.0.0.1:2181,s2=127.0.0.1:2182,s3=127.0.0.1:2183,s4=127.0.0.1:2184");
  Recorder recorder;
  WatchEngine engine(settings, test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  // s1's session fails over to s2 alone; with both down it waits rather than joining s3's or s4's.
  ensemble.set_down("s1");
  ensemble.set_down("s2");
  ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  REQUIRE(recorder.wait_for(Kind::disconnected, milliseconds(2000)));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(3000)));
  engine.stop();

  auto reconnected = recorder.of(Kind::reconnected);
  REQUIRE(reconnected.size() == 1);
  CHECK(reconnected[0].session == "s1");
  CHECK(reconnected[0].server == "s3");  // widened: the next server up
  // Not before a third of the session timeout: s3 was up all along, so a session that had tried it
  // sooner would have been back sooner. (Connections to s3 and s4 are not counted: the check after
  // a reconnect opens a session on every server, when its worker gets to it.)
  CHECK(reconnected[0].duration >= milliseconds(600));
  CHECK(recorder.of(Kind::expired).empty());
  CHECK(engine.totals().writes_lost == 0);
}

// On Kubernetes (maxClientCnxns=3 from one pod) a third session on one server leaves the checks
// beside the watch no room there: a widened session skips a server that holds two already.
TEST_CASE("watch engine: a widened session goes past a server that already holds two sessions") {
  zkverify::fake::Ensemble ensemble;
  auto settings = quick_settings();
  settings.servers = parse_server_list("s1=127.0.0.1:2181,s2=127.0.0.1:2182,s3=127.0.0.1:2183,s4=127.0.0.1:2184");
  Recorder recorder;
  WatchEngine engine(settings, test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  // s2's session moves to s3, its one other server: s3 holds two.
  ensemble.set_down("s2");
  ensemble.inject(rule("s2", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(3000)));
  REQUIRE(recorder.of(Kind::reconnected)[0].server == "s3");
  // s1's session has s2 (down) as its other server; widened, it passes s3 by for s4.
  ensemble.set_down("s1");
  ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(3000), 2));
  engine.stop();

  auto reconnected = recorder.of(Kind::reconnected);
  REQUIRE(reconnected.size() == 2);
  CHECK(reconnected[1].session == "s1");
  CHECK(reconnected[1].server == "s4");
  CHECK(recorder.of(Kind::expired).empty());
}

// A session that failed over stays where it landed unless moved: that server then holds two of the
// watch's sessions, and with maxClientCnxns=3 the checks beside the watch find no room there.
TEST_CASE("watch engine: a session that failed over goes home once its server serves, not before") {
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  ensemble.set_down("s1");
  ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(3000)));
  REQUIRE(recorder.of(Kind::reconnected)[0].server == "s2");
  // 80 more writes through s2 (about 2.4 s: two asks, 2 s apart): s1 is down, so it stays.
  auto on_s2 = ensemble.operations(zkverify::fake::OpKind::set, "s2");
  REQUIRE(written(ensemble, "s2", on_s2 + 80));
  CHECK(ensemble.operations(zkverify::fake::OpKind::home) == 0);
  CHECK(recorder.of(Kind::reconnected).size() == 1);

  ensemble.set_down("s1", false);
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(5000), 2));
  engine.stop();

  auto reconnected = recorder.of(Kind::reconnected);
  REQUIRE(reconnected.size() == 2);
  CHECK(reconnected[1].session == "s1");
  CHECK(reconnected[1].server == "s1");
  CHECK_THAT(reconnected[1].detail, StartsWith("back on its own server after"));
  CHECK(ensemble.operations(zkverify::fake::OpKind::home, "s2") == 1);
  CHECK(recorder.of(Kind::expired).empty());
  auto totals = engine.totals();
  CHECK(totals.writes_lost == 0);
  CHECK(totals.stale_reads == 0);
}

// On one address (the one-host lab) the C client cannot tell the servers apart: asked once, the
// session stays, no connection is spent on its server, and it is not asked again every two seconds.
TEST_CASE("watch engine: a session that cannot be moved home is asked once") {
  zkverify::fake::Ensemble ensemble;
  ensemble.share_one_address();
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
  REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(3000)));
  REQUIRE(ensemble.wait_for_operations(zkverify::fake::OpKind::can_go_home, "s2", 1,
                                       Clock::now() + std::chrono::seconds(10)));
  REQUIRE(recorder.wait_for(Kind::read_check, milliseconds(3000), 3));  // the read-back after the reconnect
  auto on_s2 = ensemble.operations(zkverify::fake::OpKind::set, "s2");
  auto sessions = ensemble.sessions_opened();
  REQUIRE(written(ensemble, "s2", on_s2 + 80));   // about 2.4 s: another ask would have come
  CHECK(ensemble.sessions_opened() == sessions);  // no session pinned to s1 to see it serve
  engine.stop();

  CHECK(ensemble.operations(zkverify::fake::OpKind::can_go_home) == 1);
  CHECK(ensemble.operations(zkverify::fake::OpKind::home) == 0);
  auto reconnected = recorder.of(Kind::reconnected);
  REQUIRE(reconnected.size() == 1);
  CHECK(reconnected[0].server == "s2");
}

TEST_CASE("watch engine: closes that never complete do not hold stop() up") {
  zkverify::fake::Ensemble ensemble;
  ensemble.inject(rule("", zkverify::fake::OpKind::close, zkverify::fake::Fault::never_complete));
  auto settings = quick_settings();
  WatchEngine engine(settings, test_executor(), ensemble.factory(), nullptr);
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(written(ensemble, "", 2));
  auto stopping = Clock::now();
  engine.stop();
  CHECK(Clock::now() - stopping < settings.request_timeout + std::chrono::seconds(2));
  CHECK(engine.totals().writes_lost == 0);
  // The abandoned sessions' own nodes go too, and with them the run's: nothing is left for a sweep.
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("watch engine: start() says why it cannot start, and the engine still ends in time") {
  zkverify::fake::Ensemble ensemble;
  std::string expected;
  SECTION("no server takes a session") {
    for (const auto& server : {"s1", "s2", "s3"}) ensemble.set_down(server);
    expected = "session s1 could not connect: deadline_exceeded";
  }
  SECTION("a create never completes") {
    ensemble.inject(rule("", zkverify::fake::OpKind::create, zkverify::fake::Fault::never_complete));
    expected = "cannot create /zkverify: deadline_exceeded";
  }
  auto settings = quick_settings();
  auto began = Clock::now();
  {
    WatchEngine engine(settings, test_executor(), ensemble.factory(), nullptr);
    auto error = engine.start(Clock::now() + milliseconds(300));
    REQUIRE(error);
    CHECK(*error == expected);
  }
  CHECK(Clock::now() - began < settings.request_timeout * 4 + std::chrono::seconds(1));
}

TEST_CASE("watch engine: a start() that fails half-way removes what it created") {
  zkverify::fake::Ensemble ensemble;
  // The creates: the namespace, /watch, the run's node, then each session's node and counter: the
  // 7th is session s2's counter.
  ensemble.inject(rule("", zkverify::fake::OpKind::create, zkverify::fake::Fault::connection_loss, 7));
  {
    WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), nullptr);
    auto error = engine.start(Clock::now() + milliseconds(2000));
    REQUIRE(error);
    CHECK(*error == "cannot create the znodes of session s2: connection_loss");
  }
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("watch engine: with every session expired, the counters and the run's node still go") {
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(written(ensemble, "", 3));
  for (const auto& server : {"s1", "s2", "s3"}) ensemble.expire_sessions_on(server);
  engine.stop();
  CHECK(recorder.of(Kind::expired).size() == 3);
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});
}

TEST_CASE("watch engine: at start, a run left behind is swept once no session is left and it is old enough") {
  zkverify::fake::Ensemble ensemble;
  auto settings = quick_settings();
  settings.sweep_age = milliseconds(500);
  auto killed = connected_session(ensemble);
  auto abandoned = plant_run(*killed, "gone-1-1", true);
  killed->close(Clock::now() + milliseconds(1000));                     // its session node goes with its session
  std::this_thread::sleep_for(settings.sweep_age + milliseconds(200));  // its age: only ever longer on a busy machine
  auto starting = connected_session(ensemble);
  auto young = plant_run(*starting, "starting-2-2", false);  // a watch yet to create its session nodes
  Recorder recorder;
  WatchEngine engine(settings, test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  CHECK(std::ranges::none_of(ensemble.paths(), [&](const std::string& path) { return under(path, abandoned); }));
  CHECK(ensemble.has_node(young + "/counter-s1"));
  REQUIRE(recorder.wait_for(Kind::swept, milliseconds(1000)));
  engine.stop();
  auto swept = recorder.of(Kind::swept);
  REQUIRE(swept.size() == 1);
  CHECK_THAT(swept[0].detail, StartsWith("removed " + abandoned + " and its 2 counters: no session"));
  CHECK(ensemble.has_node(young + "/counter-s2"));
}

TEST_CASE("watch engine: a run whose watch still has a session is never swept, however old") {
  zkverify::fake::Ensemble ensemble;
  auto settings = quick_settings();
  settings.sweep_age = milliseconds(300);
  auto alive = connected_session(ensemble);
  auto run = plant_run(*alive, "alive-1-1", true);
  std::this_thread::sleep_for(settings.sweep_age + milliseconds(200));
  Recorder recorder;
  WatchEngine engine(settings, test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  engine.stop();
  CHECK(recorder.of(Kind::swept).empty());
  for (const auto& node : {"/session-s1", "/counter-s1", "/counter-s2"}) CHECK(ensemble.has_node(run + node));
}

TEST_CASE("watch engine: stopped while its check is stuck, it returns and the check ends later on what it owns") {
  // The check after a reconnect opens a pinned session per server on a worker; the fake holds those
  // opens (a worker stuck in a blocking call). The session that reconnected on s2 is also sent home
  // to s1, which first opens a session pinned there, in either order with the check's: holding two
  // opens holds both. stop() waits for the check only up to its bound, then goes on. The check,
  // released after stop() returned and the engine's handle is gone, still finds its engine and
  // sessions (it owns them): no event reaches the sink after stop().
  zkverify::fake::Ensemble ensemble;
  Recorder recorder;
  std::size_t events_at_stop = 0;
  {
    WatchEngine engine(quick_settings(), test_executor(), ensemble.factory(), recorder.sink());
    REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
    ensemble.hold_opens(2);  // the check's first pinned read-back session and the move home's
    ensemble.inject(rule("s1", zkverify::fake::OpKind::set, zkverify::fake::Fault::connection_loss, 1));
    REQUIRE(recorder.wait_for(Kind::reconnected, milliseconds(2000)));
    REQUIRE(ensemble.wait_held_opens(2, Clock::now() + milliseconds(5000)));  // the check is stuck
    engine.stop_quickly(milliseconds(200));
    CHECK(ensemble.wait_held_opens(2, Clock::now()));  // stop() returned while the check was still held
    events_at_stop = recorder.count();
    CHECK(engine.totals().read_checks == 0);
    auto abandoned = engine.stop_abandoned();
    REQUIRE_FALSE(abandoned.empty());
    CHECK(abandoned.front() == StopStage::quiesce);  // the stuck check's bound, not the check's end
  }
  ensemble.release_opens();
  // The released check runs to its end (its reads fail or succeed; either way the book is closed).
  // A new watch on the same fakes proves the executor and the fake are fine afterwards.
  WatchEngine next(quick_settings(), test_executor(), ensemble.factory(), nullptr);
  REQUIRE_FALSE(next.start(Clock::now() + milliseconds(5000)));
  next.stop();
  CHECK(recorder.count() == events_at_stop);
}

TEST_CASE("watch engine: a sink stuck past its bound does not hold stop() up") {
  // The sink owns what it uses (a stop may go on without it): the gate it waits at, and its count.
  zkverify::fake::Ensemble ensemble;
  auto gate = std::make_shared<std::promise<void>>();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto sink = [opened = gate->get_future().share(), calls](const WatchEvent&) {
    if (calls->fetch_add(1) == 0) opened.wait_for(std::chrono::seconds(20));  // the first event's call sticks
  };
  auto settings = quick_settings();
  WatchEngine engine(settings, test_executor(), ensemble.factory(), sink);
  REQUIRE_FALSE(engine.start(Clock::now() + milliseconds(2000)));
  REQUIRE(written(ensemble, "", 3));
  engine.stop();
  // stop() returned while the first call still waited at the gate: every later event waits behind it.
  CHECK(calls->load() == 1);
  gate->set_value();
  auto abandoned = engine.stop_abandoned();
  CHECK(std::ranges::find(abandoned, StopStage::deliver) != abandoned.end());
  CHECK(engine.totals().writes_lost == 0);
  CHECK(ensemble.paths() == std::vector<std::string>{"/zkverify"});  // the cleanup did not wait for the sink
}

TEST_CASE("watch engine: --clients follows a registration live, gone and back under a new session, with watches") {
  zkverify::fake::Ensemble ensemble;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  auto broker = registered_broker(ensemble, 9);
  auto first_owner = *broker->session_id();

  Recorder recorder;
  auto settings = following_brokers();
  WatchEngine engine(settings, test_executor(), ensemble.factory(), recorder.sink());
  REQUIRE_FALSE(engine.start(deadline));
  // The first look (one children read), then the first round: watches on the path and its parent,
  // and its read. The broker goes only once they are set.
  REQUIRE(ensemble.wait_for_operations(zkverify::fake::OpKind::children, "", 4, deadline));
  REQUIRE(broker->close(deadline));  // its ephemeral goes with its session
  REQUIRE(recorder.wait_for(Kind::client_gone, milliseconds(5000)));
  auto renewed = connected_session(ensemble);
  REQUIRE(create_now(*renewed, "/brokers/ids/9", "", CreateMode::ephemeral, deadline).error == ZkError::ok);
  REQUIRE(recorder.wait_for(Kind::client_back, milliseconds(5000)));
  engine.stop();

  CHECK_THAT(recorder.of(Kind::client_gone).at(0).detail,
             StartsWith("Kafka broker 9 (/brokers/ids/9): gone (it was held by session " + session_text(first_owner)));
  // Broker 9 was there at the first look: back, never new.
  CHECK(recorder.of(Kind::client_new).empty());
  CHECK_THAT(recorder.of(Kind::client_back).at(0).detail,
             Contains("held by a new session " + session_text(*renewed->session_id())));
  auto clients = engine.clients();
  REQUIRE(clients.first.size() == 1);
  CHECK(clients.first[0].held.at(0).owner == first_owner);
  CHECK(clients.last.at(0).held.at(0).owner == *renewed->session_id());
  REQUIRE(clients.absences.size() == 1);
  const auto& absence = clients.absences[0];
  CHECK(absence.path == "/brokers/ids/9");
  CHECK(absence.owner_before == first_owner);
  REQUIRE(absence.back);
  CHECK(absence.owner_after == *renewed->session_id());
  CHECK(absence.gone.steady <= absence.back->steady);
  CHECK(ensemble.sessions_open() == 1);  // the renewed broker's: the engine's sessions are closed
}

TEST_CASE("watch engine: await_registrations ends once they are held again, at its deadline, or at a stop") {
  zkverify::fake::Ensemble ensemble;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  auto broker = registered_broker(ensemble, 1);
  auto settings = following_brokers();
  WatchEngine engine(settings, test_executor(), ensemble.factory(), nullptr);
  REQUIRE_FALSE(engine.start(deadline));
  auto held = [](const std::vector<ClientPathRead>& reads, const std::string& path) {
    return reads.size() == 1 && std::ranges::find(reads[0].held, path, &Registration::path) != reads[0].held.end();
  };

  SECTION("held already: at once") {
    CHECK(held(engine.await_registrations({"/brokers/ids/1"}, deadline, nullptr), "/brokers/ids/1"));
  }
  SECTION("not back by the deadline: the last reads, without it") {
    auto reads = engine.await_registrations({"/brokers/ids/9"}, Clock::now() + milliseconds(300), nullptr);
    CHECK(held(reads, "/brokers/ids/1"));
    CHECK_FALSE(held(reads, "/brokers/ids/9"));
  }
  SECTION("back while it waits: a round the child watch asked for ends the wait, not the deadline") {
    // The first look and the first round (a read, two watches and a read) are in; the wait asks for
    // a round of its own, and only once that round has set its watches does broker 9 register (on
    // the fake's word, from a thread of the test's), so only a later round can see it.
    REQUIRE(ensemble.wait_for_operations(zkverify::fake::OpKind::children, "", 4, deadline));
    // Catch's assertions stay on this thread: the other one hands back its session and outcome.
    auto registering = std::async(std::launch::async, [&] {
      std::pair<std::unique_ptr<Keeper>, ZkError> outcome{nullptr, ZkError::deadline_exceeded};
      if (!ensemble.wait_for_operations(zkverify::fake::OpKind::children, "", 6, deadline)) return outcome;
      outcome.first = ensemble.factory().open(parse_server_list("s1=127.0.0.1:2181"), {});
      if (outcome.first->wait_connected(deadline) == ZkError::ok)
        outcome.second = create_now(*outcome.first, "/brokers/ids/9", "", CreateMode::ephemeral, deadline).error;
      return outcome;
    });
    auto reads = engine.await_registrations({"/brokers/ids/9"}, deadline, nullptr);
    REQUIRE(registering.wait_until(deadline) == std::future_status::ready);
    REQUIRE(registering.get().second == ZkError::ok);
    CHECK(held(reads, "/brokers/ids/9"));
    CHECK(Clock::now() < deadline);
  }
  SECTION("a stop ends it at once") {
    boost::asio::io_context idle;
    StopSignals signals(idle);
    signals.request(SIGTERM);
    auto reads = engine.await_registrations({"/brokers/ids/9"}, deadline, &signals);
    CHECK_FALSE(held(reads, "/brokers/ids/9"));
    CHECK(Clock::now() < deadline - std::chrono::seconds(5));
  }
  engine.stop();
}
