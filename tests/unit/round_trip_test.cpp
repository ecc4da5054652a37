#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "fake_keeper.hpp"
#include "probes/client_reads.hpp"
#include "probes/round_trip.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using zkverify::fake::Ensemble;
using zkverify::fake::Fault;
using zkverify::fake::OpKind;
using zkverify::fake::Rule;
using namespace std::chrono_literals;

namespace {

constexpr auto kPayload = "round trip payload";
constexpr auto kProbePrefix = "/zkverify/roundtrip-";
// How far past a deadline run_round_trip may return: thread wake-ups, not work.
constexpr auto kSlack = 1s;

// Three servers with ids 11, 12, 13 (as a session id's top byte carries them); s2 is written through.
class ThreeServers {
 public:
  ThreeServers() {
    for (int i = 1; i <= 3; ++i) ensemble.set_server_id("s" + std::to_string(i), 10 + i);
  }

  RoundTripPlan plan(std::chrono::milliseconds span = 500ms) const {
    RoundTripPlan plan;
    for (int i = 1; i <= 3; ++i)
      plan.servers.push_back({"s" + std::to_string(i), "10.0.0." + std::to_string(i), 2181, {}});
    plan.writer = 1;
    plan.namespace_path = "/zkverify";
    plan.payload = kPayload;
    plan.deadline = Clock::now() + span;
    plan.session_timeout = 1000ms;
    return plan;
  }

  RoundTrip run(const RoundTripPlan& plan) { return run_round_trip(plan, ensemble.factory()); }

  // Every session the round trip opened was closed, and took its ephemerals with it.
  void check_all_closed() const {
    CHECK(ensemble.sessions_opened() == 3);
    CHECK(ensemble.sessions_open() == 0);
  }

  Ensemble ensemble;
};

void check_read_ok(const ReadBack& read, const RoundTrip& trip) {
  INFO("server " << read.server);
  CHECK(read.error == ZkError::ok);
  CHECK(read.bytes_match);
  CHECK(read.read_mzxid == trip.write_zxid);
}

std::vector<std::string> namespace_only() { return {"/zkverify"}; }

}  // namespace

TEST_CASE("round trip: a healthy ensemble reads the write back through every server", "[round_trip]") {
  ThreeServers lab;
  auto trip = lab.run(lab.plan());

  CHECK(trip.writer == "s2");
  CHECK(trip.namespace_error == ZkError::ok);
  REQUIRE(trip.write_error == ZkError::ok);
  CHECK(trip.path.starts_with(kProbePrefix));
  REQUIRE(trip.write_zxid);
  CHECK(trip.write_zxid->epoch() == 1);
  REQUIRE(trip.reads.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& read = trip.reads[i];
    CHECK(read.server == "s" + std::to_string(i + 1));
    check_read_ok(read, trip);
    CHECK(read.session_server_id == static_cast<int>(11 + i));
    CHECK(read.latency > 0us);
    CHECK(read.marker_error == ZkError::not_attempted);
  }
  CHECK(trip.removal_error == ZkError::ok);
  CHECK(trip.marker_create_error == ZkError::not_attempted);
  CHECK(lab.ensemble.paths() == namespace_only());
  CHECK(lab.ensemble.operations(OpKind::sync) == 3);
  CHECK(lab.ensemble.operations(OpKind::remove) == 0);  // the writer's close removed the node
  lab.check_all_closed();
  CHECK(lab.ensemble.closes_completed() == 3);
}

TEST_CASE("round trip: a server that reads back other bytes than were written is no match", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s3", OpKind::get, zkverify::fake::Fault::other_bytes, 0, kProbePrefix});
  auto trip = lab.run(lab.plan());
  REQUIRE(trip.reads.size() == 3);
  check_read_ok(trip.reads[0], trip);
  check_read_ok(trip.reads[1], trip);
  CHECK(trip.reads[2].error == ZkError::ok);
  CHECK_FALSE(trip.reads[2].bytes_match);
}

TEST_CASE("round trip: the namespace is created only when the write finds it missing", "[round_trip]") {
  ThreeServers lab;
  auto first = lab.run(lab.plan());
  REQUIRE(first.write_error == ZkError::ok);
  CHECK(first.namespace_error == ZkError::ok);
  CHECK(lab.ensemble.operations(OpKind::create) == 3);  // the probe node (no_node), the namespace, the probe node

  auto second = lab.run(lab.plan());
  REQUIRE(second.write_error == ZkError::ok);
  CHECK(second.namespace_error == ZkError::ok);
  CHECK(lab.ensemble.operations(OpKind::create) == 4);  // only the probe node: the namespace is there
  CHECK(lab.ensemble.operations(OpKind::exists) == 0);  // and nobody asked
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: the marker is created when asked and read through every server", "[round_trip]") {
  ThreeServers lab;
  auto plan = lab.plan();
  plan.marker_path = "/zkverify/marker";
  plan.marker_content = "first run";

  auto first = lab.run(plan);
  CHECK(first.marker_create_error == ZkError::ok);
  CHECK(first.marker_path == plan.marker_path);
  for (const auto& read : first.reads) {
    INFO("server " << read.server);
    check_read_ok(read, first);
    CHECK(read.marker_error == ZkError::ok);
    CHECK(read.marker_data == "first run");
    CHECK(read.marker_czxid == first.reads[0].marker_czxid);
  }
  CHECK(lab.ensemble.paths() == std::vector<std::string>{"/zkverify", "/zkverify/marker"});

  plan.marker_content = "second run";
  plan.write = false;
  plan.deadline = Clock::now() + 500ms;
  auto second = lab.run(plan);
  CHECK(second.marker_create_error == ZkError::node_exists);
  CHECK(second.write_error == ZkError::not_attempted);
  for (const auto& read : second.reads) {
    INFO("server " << read.server);
    CHECK(read.error == ZkError::ok);
    CHECK(read.marker_data == "first run");
    CHECK(read.marker_czxid == first.reads[0].marker_czxid);
  }
  CHECK(lab.ensemble.data_of("/zkverify/marker") == "first run");
}

TEST_CASE("round trip: without a write, a missing marker is a fact, not a failed read", "[round_trip]") {
  ThreeServers lab;
  auto plan = lab.plan();
  plan.write = false;
  plan.marker_path = "/zkverify/marker";
  auto trip = lab.run(plan);
  CHECK(trip.namespace_error == ZkError::not_attempted);
  for (const auto& read : trip.reads) {
    CHECK(read.error == ZkError::ok);
    CHECK(read.marker_error == ZkError::no_node);
  }
  CHECK(lab.ensemble.paths().empty());
  CHECK(lab.ensemble.operations(OpKind::create) == 0);
}

TEST_CASE("round trip: a namespace that cannot be created stops the write and the reads", "[round_trip]") {
  ThreeServers lab;
  auto plan = lab.plan();
  plan.namespace_path = "/missing/zkverify";
  auto trip = lab.run(plan);
  CHECK(trip.namespace_error == ZkError::no_node);
  CHECK(trip.write_error == ZkError::not_attempted);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
  CHECK(lab.ensemble.paths().empty());
  lab.check_all_closed();
}

TEST_CASE("round trip: connection loss during one server's read fails only that read", "[round_trip]") {
  ThreeServers lab;
  SECTION("in its sync") { lab.ensemble.inject({"s3", OpKind::sync, Fault::connection_loss, 0, ""}); }
  SECTION("in its get of the probe node") {
    lab.ensemble.inject({"s3", OpKind::get, Fault::connection_loss, 0, kProbePrefix});
  }
  auto trip = lab.run(lab.plan());

  REQUIRE(trip.write_error == ZkError::ok);
  check_read_ok(trip.reads[0], trip);
  check_read_ok(trip.reads[1], trip);
  CHECK(trip.reads[2].error == ZkError::connection_loss);
  CHECK_FALSE(trip.reads[2].bytes_match);
  CHECK(trip.removal_error == ZkError::ok);
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: a reader's session expiring fails only its read", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s1", OpKind::get, Fault::session_expired, 0, kProbePrefix});
  auto trip = lab.run(lab.plan());

  CHECK(trip.reads[0].error == ZkError::session_expired);
  check_read_ok(trip.reads[1], trip);
  check_read_ok(trip.reads[2], trip);
  CHECK(trip.removal_error == ZkError::ok);
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: the writer's session expiring on the write: no reads", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s2", OpKind::create, Fault::session_expired, 0, kProbePrefix});
  auto trip = lab.run(lab.plan());

  CHECK(trip.namespace_error == ZkError::not_attempted);  // the write failed before it could tell
  CHECK(trip.write_error == ZkError::session_expired);
  CHECK_FALSE(trip.write_zxid);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
  CHECK(lab.ensemble.operations(OpKind::sync) == 0);
  CHECK(lab.ensemble.operations(OpKind::get) == 0);
  CHECK(lab.ensemble.paths().empty());  // the probe node came first: nothing was written
}

TEST_CASE("round trip: a read that never completes costs that read only, and only until the deadline", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s3", OpKind::get, Fault::never_complete, 0, ""});
  auto plan = lab.plan(300ms);
  auto trip = lab.run(plan);

  CHECK(Clock::now() < plan.deadline + kSlack);
  check_read_ok(trip.reads[0], trip);
  check_read_ok(trip.reads[1], trip);
  CHECK(trip.reads[0].latency < 300ms);
  CHECK(trip.reads[2].error == ZkError::deadline_exceeded);
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: a session that never connects costs its own read only", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s1", OpKind::connect, Fault::never_complete, 0, ""});
  auto plan = lab.plan(300ms);
  auto trip = lab.run(plan);

  CHECK(Clock::now() < plan.deadline + kSlack);
  CHECK(trip.reads[0].error == ZkError::deadline_exceeded);
  CHECK_FALSE(trip.reads[0].session_server_id);
  check_read_ok(trip.reads[1], trip);
  check_read_ok(trip.reads[2], trip);
  CHECK(trip.reads[2].latency < 300ms);
  // The probe node is kept for the late session's read until the deadline, so its delete may come
  // too late; closing the writer's session takes it then.
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: a writer that never connects: the write fails by the deadline", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"s2", OpKind::connect, Fault::never_complete, 0, ""});
  auto plan = lab.plan(200ms);
  auto trip = lab.run(plan);

  CHECK(Clock::now() < plan.deadline + kSlack);
  CHECK(trip.write_error == ZkError::deadline_exceeded);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
  CHECK(lab.ensemble.paths().empty());
}

TEST_CASE("round trip: closes that never complete are abandoned together at the close deadline", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.inject({"", OpKind::close, Fault::never_complete, 0, ""});
  auto plan = lab.plan(300ms);
  plan.close_deadline = plan.deadline + 300ms;
  auto trip = lab.run(plan);

  CHECK(Clock::now() >= plan.close_deadline);
  CHECK(Clock::now() < plan.close_deadline + kSlack);
  for (const auto& read : trip.reads) check_read_ok(read, trip);
  CHECK(lab.ensemble.operations(OpKind::close) == 3);
  CHECK(lab.ensemble.closes_completed() == 0);
  // The writer's close removes the node: abandoned, it leaves the node to the session's expiry, and
  // says so (the judge's cleanup-deferred).
  CHECK(trip.removal_error == ZkError::deadline_exceeded);
  CHECK(lab.ensemble.sessions_open() > 0);
  CHECK(lab.ensemble.has_node(trip.path));
}

TEST_CASE("round trip: reordered completions are still attributed to their own server and node", "[round_trip]") {
  ThreeServers lab;
  lab.ensemble.reorder_completions();
  lab.ensemble.inject({"s1", OpKind::get, Fault::connection_loss, 0, kProbePrefix});
  auto plan = lab.plan();
  plan.marker_path = "/zkverify/marker";
  plan.marker_content = "marker";
  auto trip = lab.run(plan);

  CHECK(trip.reads[0].error == ZkError::connection_loss);
  for (std::size_t i = 1; i < 3; ++i) {
    const auto& read = trip.reads[i];
    check_read_ok(read, trip);
    CHECK(read.session_server_id == static_cast<int>(11 + i));
    CHECK(read.marker_error == ZkError::ok);
    CHECK(read.marker_data == "marker");
  }
  CHECK(lab.ensemble.paths() == std::vector<std::string>{"/zkverify", "/zkverify/marker"});
}

TEST_CASE("round trip: sessions opened ahead are the ones it uses, and one the plan leaves out is closed with them",
          "[round_trip]") {
  ThreeServers lab;
  auto plan = lab.plan();
  SessionsAhead ahead(lab.ensemble.factory(), plan.session_timeout);
  ahead.open(plan.servers[0]);
  ahead.open(plan.servers[1]);               // the writer
  ahead.open(plan.servers[1]);               // once per server
  ahead.open({"s4", "10.0.0.4", 2181, {}});  // not in the plan (it stopped serving, say)
  CHECK(lab.ensemble.sessions_opened() == 3);

  auto trip = run_round_trip(plan, lab.ensemble.factory(), &ahead);
  REQUIRE(trip.write_error == ZkError::ok);
  for (const auto& read : trip.reads) check_read_ok(read, trip);
  CHECK(lab.ensemble.sessions_opened() == 4);  // s3's, opened by the round trip itself
  CHECK(lab.ensemble.sessions_open() == 0);    // s4's too was closed
  CHECK(lab.ensemble.paths() == namespace_only());
}

TEST_CASE("round trip: --clients paths are read through the writer, with the sessions that hold them", "[round_trip]") {
  ThreeServers lab;
  // Two "brokers" on sessions of their own, and a persistent child that is nobody's registration.
  auto broker = lab.ensemble.factory().open({{"s1", "10.0.0.1", 2181, {}}}, {});
  REQUIRE(broker->wait_connected(Clock::now() + 1s) == ZkError::ok);
  auto deadline = Clock::now() + 1s;
  for (const auto* path : {"/brokers", "/brokers/ids", "/brokers/ids/old"})
    REQUIRE(create_now(*broker, path, "", CreateMode::persistent, deadline).error == ZkError::ok);
  REQUIRE(create_now(*broker, "/brokers/ids/1", "", CreateMode::ephemeral, deadline).error == ZkError::ok);
  REQUIRE(create_now(*broker, "/controller", R"({"brokerid":1})", CreateMode::ephemeral, deadline).error ==
          ZkError::ok);

  auto plan = lab.plan();
  plan.client_paths = {"/brokers/ids", "/controller", "/missing"};
  auto trip = lab.run(plan);
  REQUIRE(trip.clients.size() == 3);
  CHECK(trip.clients[0].error == ZkError::ok);
  REQUIRE(trip.clients[0].held.size() == 1);  // not the persistent child
  CHECK(trip.clients[0].held[0].path == "/brokers/ids/1");
  CHECK(trip.clients[0].held[0].owner == broker->session_id());
  REQUIRE(trip.clients[1].held.size() == 1);  // the path's own ephemeral node
  CHECK(trip.clients[1].held[0].data == R"({"brokerid":1})");
  CHECK(trip.clients[2].error == ZkError::no_node);
  broker->close(Clock::now() + 1s);
}
