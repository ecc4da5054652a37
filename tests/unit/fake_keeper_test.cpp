#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "fake_keeper.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using zkverify::fake::Ensemble;
using zkverify::fake::Fault;
using zkverify::fake::OpKind;
using zkverify::fake::Rule;
using namespace std::chrono_literals;

namespace {

std::vector<ServerAddress> servers(std::initializer_list<const char*> names) {
  std::vector<ServerAddress> listed;
  std::uint16_t port = 2181;
  for (const char* name : names) listed.push_back({name, "127.0.0.1", port++, {}});
  return listed;
}

Clock::time_point soon() { return Clock::now() + 1s; }

// Session events as a listener sees them, on the dispatcher's thread.
class EventLog {
 public:
  Keeper::Listener listener() {
    return [this](const SessionEvent& event) {
      {
        std::lock_guard lock(mutex_);
        events_.push_back(event);
      }
      arrived_.notify_all();
    };
  }
  // The events once `count` arrived; fewer if a second passed first.
  std::vector<SessionEvent> wait_for(std::size_t count) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, 1s, [&] { return events_.size() >= count; });
    return events_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<SessionEvent> events_;
};

std::unique_ptr<Keeper> connected_session(Ensemble& ensemble, const std::vector<ServerAddress>& listed,
                                          Keeper::Listener listener = nullptr) {
  auto session = ensemble.factory().open(listed, {}, std::move(listener));
  REQUIRE(session->wait_connected(soon()) == ZkError::ok);
  return session;
}

}  // namespace

TEST_CASE("fake keeper: creates, sequential names and ephemerals behave as in ZooKeeper", "[fake_keeper]") {
  Ensemble ensemble;
  auto session = connected_session(ensemble, servers({"a"}));

  CHECK(create_now(*session, "/missing/child", "", CreateMode::persistent, soon()).error == ZkError::no_node);
  auto made = create_now(*session, "/app", "x", CreateMode::persistent, soon());
  REQUIRE(made.error == ZkError::ok);
  CHECK(made.path == "/app");
  CHECK(made.stat.czxid.epoch() == 1);
  CHECK(create_now(*session, "/app", "y", CreateMode::persistent, soon()).error == ZkError::node_exists);

  auto first = create_now(*session, "/app/item-", "1", CreateMode::persistent_sequential, soon());
  auto second = create_now(*session, "/app/item-", "2", CreateMode::ephemeral_sequential, soon());
  CHECK(first.path == "/app/item-0000000000");
  CHECK(second.path == "/app/item-0000000001");
  CHECK(second.stat.czxid > first.stat.czxid);
  CHECK(create_now(*session, second.path + "/under", "", CreateMode::persistent, soon()).error ==
        ZkError::no_children_for_ephemerals);

  Expect<ChildrenResult> listed;
  session->children("/app", listed.callback());
  CHECK(listed.await(soon()).children == std::vector<std::string>{"item-0000000000", "item-0000000001"});

  REQUIRE(session->close(soon()));
  CHECK(ensemble.paths() == std::vector<std::string>{"/app", "/app/item-0000000000"});
  CHECK(ensemble.closes_completed() == 1);
  CHECK(ensemble.sessions_open() == 0);
}

TEST_CASE("fake keeper: set, remove and multi check versions, and a failed multi changes nothing", "[fake_keeper]") {
  Ensemble ensemble;
  auto session = connected_session(ensemble, servers({"a"}));
  REQUIRE(create_now(*session, "/n", "v0", CreateMode::persistent, soon()).error == ZkError::ok);
  REQUIRE(create_now(*session, "/n/child", "", CreateMode::persistent, soon()).error == ZkError::ok);

  Expect<StatResult> stale, fresh;
  session->set("/n", "v1", 3, stale.callback());
  session->set("/n", "v1", 0, fresh.callback());
  CHECK(stale.await(soon()).error == ZkError::bad_version);
  auto set = fresh.await(soon());
  REQUIRE(set.error == ZkError::ok);
  CHECK(set.stat.version == 1);
  CHECK(set.stat.mzxid > set.stat.czxid);
  CHECK(ensemble.data_of("/n") == "v1");
  CHECK(remove_now(*session, "/n", soon()) == ZkError::not_empty);

  Expect<MultiResult> failing;
  session->multi({{MultiOp::Kind::create, "/other", "", CreateMode::persistent, -1},
                  {MultiOp::Kind::remove, "/n/child", "", CreateMode::persistent, 7},
                  {MultiOp::Kind::set, "/n", "v2", CreateMode::persistent, -1}},
                 failing.callback());
  auto failed = failing.await(soon());
  CHECK(failed.error == ZkError::bad_version);
  CHECK(failed.each == std::vector{ZkError::ok, ZkError::bad_version, ZkError::runtime_inconsistency});
  CHECK_FALSE(ensemble.has_node("/other"));

  Expect<MultiResult> passing;
  session->multi({{MultiOp::Kind::check, "/n", "", CreateMode::persistent, 1},
                  {MultiOp::Kind::remove, "/n/child", "", CreateMode::persistent, -1},
                  {MultiOp::Kind::remove, "/n", "", CreateMode::persistent, -1}},
                 passing.callback());
  CHECK(passing.await(soon()).error == ZkError::ok);
  CHECK(ensemble.paths().empty());

  Expect<DoneResult> synced;
  session->sync("/", synced.callback());
  CHECK(synced.await(soon()).error == ZkError::ok);
}

TEST_CASE("fake keeper: a session connects to its first listed server that is up", "[fake_keeper]") {
  Ensemble ensemble;
  ensemble.set_server_id("b", 7);
  ensemble.set_down("a");
  EventLog log;
  KeeperOptions options;
  options.session_timeout = 4000ms;
  auto session = ensemble.factory().open(servers({"a", "b"}), options, log.listener());
  REQUIRE(session->wait_connected(soon()) == ZkError::ok);

  CHECK(session->connected_server() == "b");
  CHECK(creator_id(*session) == 7);
  CHECK(session->negotiated_timeout() == 4000ms);
  auto events = log.wait_for(1);
  REQUIRE(events.size() == 1);
  CHECK(events[0].state == SessionState::connected);
  CHECK(events[0].server == "b");
  CHECK(events[0].granted_timeout == 4000ms);
  CHECK(ensemble.operations(OpKind::connect, "a") == 0);

  ensemble.set_down("b");
  auto refused = ensemble.factory().open(servers({"a", "b"}), {});
  CHECK(refused->wait_connected(Clock::now() + 100ms) == ZkError::deadline_exceeded);
  CHECK(refused->state() == SessionState::connecting);
}

TEST_CASE("fake keeper: completions run on the dispatcher, never inside the call", "[fake_keeper]") {
  Ensemble ensemble;
  auto session = connected_session(ensemble, servers({"a"}));
  std::promise<std::thread::id> completed_on;
  session->exists("/", [&](StatResult) { completed_on.set_value(std::this_thread::get_id()); });
  CHECK(completed_on.get_future().get() != std::this_thread::get_id());
}

TEST_CASE("fake keeper: connection loss fails the operation, then the session reconnects to its next server",
          "[fake_keeper]") {
  Ensemble ensemble;
  ensemble.inject({"a", OpKind::get, Fault::connection_loss, 0, ""});
  EventLog log;
  auto session = connected_session(ensemble, servers({"a", "b"}), log.listener());
  auto id = session->session_id();

  CHECK(get_now(*session, "/", soon()).error == ZkError::connection_loss);
  auto events = log.wait_for(3);
  REQUIRE(events.size() == 3);
  CHECK(events[1].state == SessionState::connecting);
  CHECK(events[2].state == SessionState::connected);
  CHECK(events[2].server == "b");
  REQUIRE(session->wait_connected(soon()) == ZkError::ok);
  CHECK(session->session_id() == id);
  CHECK(get_now(*session, "/", soon()).error == ZkError::ok);
  CHECK(ensemble.operations(OpKind::get) == 2);
}

TEST_CASE("fake keeper: an expired session loses its ephemerals and fails every later operation", "[fake_keeper]") {
  Ensemble ensemble;
  EventLog log;
  auto session = connected_session(ensemble, servers({"a"}), log.listener());
  auto other = connected_session(ensemble, servers({"b"}));
  REQUIRE(create_now(*session, "/mine", "", CreateMode::ephemeral, soon()).error == ZkError::ok);

  SECTION("by a fault on an operation") {
    ensemble.inject({"a", OpKind::exists, Fault::session_expired, 0, ""});
    CHECK(exists_now(*session, "/", soon()).error == ZkError::session_expired);
  }
  SECTION("by expiring the sessions on its server") { ensemble.expire_sessions_on("a"); }
  CHECK_FALSE(ensemble.has_node("/mine"));
  CHECK(get_now(*session, "/", soon()).error == ZkError::session_expired);
  CHECK(session->wait_connected(soon()) == ZkError::session_expired);
  auto events = log.wait_for(2);
  REQUIRE(events.size() == 2);
  CHECK(events[1].state == SessionState::expired);
  CHECK(get_now(*other, "/", soon()).error == ZkError::ok);
  CHECK(ensemble.sessions_open() == 1);
}

TEST_CASE("fake keeper: rules hit the n-th matching operation, by server and path", "[fake_keeper]") {
  Ensemble ensemble;
  ensemble.inject({"", OpKind::get, Fault::connection_loss, 2, "/hit"});
  auto session = connected_session(ensemble, servers({"a"}));
  REQUIRE(create_now(*session, "/hit", "", CreateMode::persistent, soon()).error == ZkError::ok);

  CHECK(get_now(*session, "/", soon()).error == ZkError::ok);
  CHECK(get_now(*session, "/hit", soon()).error == ZkError::ok);
  CHECK(get_now(*session, "/hit", soon()).error == ZkError::connection_loss);
  REQUIRE(session->wait_connected(soon()) == ZkError::ok);
  CHECK(get_now(*session, "/hit", soon()).error == ZkError::ok);
}

TEST_CASE("fake keeper: an operation or a close that never completes", "[fake_keeper]") {
  Ensemble ensemble;
  ensemble.inject({"a", OpKind::get, Fault::never_complete, 0, ""});
  ensemble.inject({"a", OpKind::close, Fault::never_complete, 0, ""});
  auto session = connected_session(ensemble, servers({"a"}));
  REQUIRE(create_now(*session, "/mine", "", CreateMode::ephemeral, soon()).error == ZkError::ok);

  CHECK(get_now(*session, "/", Clock::now() + 100ms).error == ZkError::deadline_exceeded);
  auto started = Clock::now();
  CHECK_FALSE(session->close(started + 150ms));
  CHECK(Clock::now() - started >= 150ms);
  CHECK(Clock::now() - started < 1s);
  CHECK(session->state() == SessionState::closed);
  CHECK(exists_now(*session, "/", soon()).error == ZkError::closing);
  // The server never processed the close: the session and its ephemeral stay.
  CHECK(ensemble.sessions_open() == 1);
  CHECK(ensemble.closes_completed() == 0);
  CHECK(ensemble.has_node("/mine"));
}

TEST_CASE("fake keeper: reordered and delayed completions", "[fake_keeper]") {
  Ensemble ensemble;
  auto session = connected_session(ensemble, servers({"a"}));
  std::mutex mutex;
  std::vector<std::string> order;
  std::promise<void> all_done;
  auto record = [&](std::string name) {
    return [&, name](GetResult) {
      std::lock_guard lock(mutex);
      order.push_back(name);
      if (order.size() == 3) all_done.set_value();
    };
  };

  SECTION("newest first") {
    ensemble.reorder_completions();
    for (auto name : {"first", "second", "third"}) session->get("/", record(name));
    REQUIRE(all_done.get_future().wait_for(1s) == std::future_status::ready);
    CHECK(order == std::vector<std::string>{"third", "second", "first"});
  }
  SECTION("each waits the delay, in order") {
    ensemble.delay_completions(100ms);
    auto started = Clock::now();
    for (auto name : {"first", "second", "third"}) session->get("/", record(name));
    REQUIRE(all_done.get_future().wait_for(1s) == std::future_status::ready);
    CHECK(Clock::now() - started >= 100ms);
    CHECK(order == std::vector<std::string>{"first", "second", "third"});
  }
}

TEST_CASE("fake keeper: sessions may die before their completions, or outlive the ensemble", "[fake_keeper]") {
  auto ensemble = std::make_unique<Ensemble>();
  ensemble->delay_completions(50ms);

  auto short_lived = connected_session(*ensemble, servers({"a"}));
  std::promise<ZkError> answered;
  short_lived->exists("/", [&](StatResult result) { answered.set_value(result.error); });
  short_lived.reset();  // closes the session; the operation had started, so it is still answered
  auto answer = answered.get_future();
  REQUIRE(answer.wait_for(1s) == std::future_status::ready);
  CHECK(answer.get() == ZkError::ok);

  auto outliving = connected_session(*ensemble, servers({"a"}));
  std::atomic<int> delivered{0};
  outliving->exists("/", [&](StatResult) { ++delivered; });
  ensemble.reset();  // drops the queued completion
  outliving->exists("/", [&](StatResult) { ++delivered; });
  CHECK(outliving->close(Clock::now() + 10ms));
  outliving.reset();
  CHECK(delivered == 0);
}
