// The books that were buried in threads: the restart's timeline (step's poller) and the sidecar's
// cycles, fed with polls, results and the time, without a thread or a clock.
#include <catch2/catch.hpp>

#include "model/books/restart_timeline.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/readiness.hpp"
#include "model/judge/sidecar_book.hpp"
#include "model/render/step_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

const Clock::time_point t0{};

// One poll at t0 + `at`: who leads, whether someone follows, whether the restarted server serves.
PollSeen poll(std::chrono::milliseconds at, std::optional<std::string> leader, bool target_serving,
              std::optional<std::int64_t> received = std::nullopt, bool someone_follows = true) {
  // Nobody leading or following: the others answered that they do not serve (an election).
  bool looking = !leader && !someone_follows;
  return {t0 + at, std::move(leader), someone_follows, target_serving, received, looking, {}, {}};
}

CycleResult cycle_of(const EnsembleFacts& facts, const std::string& local) {
  CycleResult result;
  result.report = judge(facts);
  result.readiness = judge_readiness(result.report, local, true, std::nullopt);
  return result;
}

}  // namespace

TEST_CASE("restart timeline: down in two polls, then back: a restart with its downtime and its window", "[books]") {
  RestartTimeline book(std::string("zoo-1"));
  book.polled(poll(0ms, "zoo-1", true, 500));
  book.polled(poll(100ms, "zoo-1", false));
  CHECK_FALSE(book.restart_seen());  // one missed poll is a refused connection, not yet a restart
  book.polled(poll(200ms, "zoo-1", false));
  CHECK(book.restart_seen());
  book.polled(poll(900ms, "zoo-1", true, 3));
  auto timeline = book.timeline(t0 + 1s);
  CHECK(timeline.downtime == 800ms);
  REQUIRE(timeline.down_window);
  CHECK(timeline.down_window->first == t0 + 100ms);
  CHECK(timeline.down_window->second == t0 + 900ms);
  CHECK(timeline.leader_after == "zoo-1");
  CHECK(timeline.longest_leaderless == 0ms);
}

TEST_CASE("restart timeline: a single refused poll is no restart, a Received count that fell is one", "[books]") {
  RestartTimeline once(std::nullopt);
  once.polled(poll(0ms, "pzoo-0", true, 900));
  once.polled(poll(100ms, "pzoo-0", false));
  once.polled(poll(200ms, "pzoo-0", true, 950));
  CHECK_FALSE(once.restart_seen());
  CHECK(once.timeline(t0 + 300ms).downtime == 100ms);

  RestartTimeline quick(std::nullopt);  // restarted between two polls: never seen down
  quick.polled(poll(0ms, "pzoo-0", true, 900));
  quick.polled(poll(100ms, "pzoo-0", true, 12));
  CHECK(quick.restart_seen());
  CHECK_FALSE(quick.timeline(t0 + 200ms).downtime);
}

TEST_CASE("restart timeline: a downtime still running counts until now", "[books]") {
  RestartTimeline book(std::nullopt);
  book.polled(poll(0ms, "pzoo-0", false));
  book.polled(poll(100ms, "pzoo-0", false));
  CHECK(book.timeline(t0 + 2500ms).downtime == 2500ms);
  CHECK(book.timeline(t0 + 2500ms).down_window->second == t0 + 2500ms);
}

TEST_CASE("restart timeline: the leader moves, and a poll where followers answer but the leader did not says nothing",
          "[books]") {
  RestartTimeline book(std::string("zoo-1"));
  book.polled(poll(0ms, "zoo-1", true));
  book.polled(poll(100ms, std::nullopt, false, std::nullopt, false));  // nobody leads, nobody follows
  book.polled(poll(200ms, std::nullopt, false, std::nullopt, true));   // followers: a leader exists, unseen
  book.polled(poll(700ms, "pzoo-2", false));
  auto timeline = book.timeline(t0 + 1s);
  CHECK(timeline.leader_before == "zoo-1");
  CHECK(timeline.leader_after == "pzoo-2");
  // From the last poll that showed zoo-1 leading to the first that showed pzoo-2: one poll at 100ms
  // showed none, which covers no time of its own, so all of it was between polls that could tell.
  CHECK(timeline.longest_leaderless == 700ms);
  CHECK(timeline.leaderless_unobserved == 700ms);
  REQUIRE(timeline.leaderless_window);
  CHECK(timeline.leaderless_window->first == t0);
  CHECK(timeline.leaderless_window->second == t0 + 700ms);
}

TEST_CASE("restart timeline: a leader that moved while followers still followed it was still missing for a while",
          "[books]") {
  // The "0ms without a leader": zoo-1 stopped, the followers' srvr still said follower
  // (they had not noticed yet), then pzoo-2 led. No poll showed "no leader", yet there was none.
  RestartTimeline book(std::string("zoo-1"), t0);
  book.polled(poll(0ms, "zoo-1", true));
  book.polled(poll(100ms, std::nullopt, false, std::nullopt, true));
  book.polled(poll(200ms, std::nullopt, false, std::nullopt, true));
  book.polled(poll(450ms, "pzoo-2", false));
  auto timeline = book.timeline(t0 + 1s);
  CHECK(timeline.longest_leaderless == 450ms);
  CHECK(timeline.leaderless_unobserved == 450ms);

  // Polls that showed none count as observed: 100ms to 300ms of the 500ms.
  RestartTimeline again(std::string("zoo-1"), t0);
  again.polled(poll(0ms, "zoo-1", true));
  again.polled(poll(100ms, std::nullopt, false, std::nullopt, false));
  again.polled(poll(300ms, std::nullopt, false, std::nullopt, false));
  again.polled(poll(500ms, "zoo-1", true));
  timeline = again.timeline(t0 + 1s);
  CHECK(timeline.leader_after == "zoo-1");
  CHECK(timeline.longest_leaderless == 500ms);
  CHECK(timeline.leaderless_unobserved == 300ms);
  CHECK_THAT(render_step_summary("zoo-1", 0, timeline, 0ms, {}),
             Contains("leader stayed zoo-1 (500ms without a leader, 300ms of it unobserved)"));

  // Polls nobody answered (refused, timed out: a loaded host) are no evidence of an election: a
  // follower's restart on such a host leaves the leader leading throughout.
  RestartTimeline loaded(std::string("zoo-1"), t0);
  loaded.polled(poll(0ms, "zoo-1", true));
  auto silent = poll(100ms, std::nullopt, false, std::nullopt, false);
  silent.someone_looking = false;
  loaded.polled(silent);
  loaded.polled(poll(5000ms, "zoo-1", true));
  CHECK(loaded.timeline(t0 + 6s).longest_leaderless == 0ms);

  // The leader gone before the first poll: no leader was seen since the step started.
  RestartTimeline late(std::string("zoo-1"), t0);
  late.polled(poll(100ms, std::nullopt, false, std::nullopt, false));
  late.polled(poll(600ms, "pzoo-2", false));
  timeline = late.timeline(t0 + 1s);
  CHECK(timeline.longest_leaderless == 600ms);
  CHECK(timeline.leaderless_window->first == t0);
  CHECK_THAT(render_step_summary("zoo-1", 0, timeline, 0ms, {}),
             Contains("leader moved zoo-1 -> pzoo-2 (600ms without a leader, 600ms of it unobserved)"));
}

TEST_CASE("restart timeline: the leader before the step, when the first polls miss it", "[books]") {
  RestartTimeline book(std::string("zoo-1"));
  book.polled(poll(0ms, std::nullopt, true, std::nullopt, true));
  CHECK(book.timeline(t0).leader_before == "zoo-1");
  RestartTimeline unknown(std::nullopt);
  unknown.polled(poll(0ms, "pzoo-1", true));
  CHECK(unknown.timeline(t0).leader_before == "pzoo-1");
}

TEST_CASE("poll_seen: who leads, whether someone follows, how the restarted server answered", "[books]") {
  auto facts = synthetic::healthy_five();
  facts.probes[3] = synthetic::unreachable("zoo-0");
  facts.probes[4].srvr->facts.received = 77;
  auto seen = poll_seen(facts.probes, "zoo-1", t0 + 5ms);
  CHECK(seen.at == t0 + 5ms);
  CHECK(seen.leader == "pzoo-1");
  CHECK(seen.someone_follows);
  CHECK(seen.target_serving);
  CHECK(seen.target_received == 77);
  CHECK(seen.target_connections == facts.probes[4].srvr->facts.connections);
  CHECK(seen.connections.size() == 3);  // the three others that answered srvr; zoo-0 did not
  CHECK_FALSE(seen.connections.contains("zoo-0"));
  CHECK_FALSE(seen.connections.contains("zoo-1"));
  CHECK_FALSE(poll_seen(facts.probes, "zoo-0", t0).target_serving);
  CHECK_FALSE(seen.someone_looking);
  facts.probes[2] = synthetic::not_serving("pzoo-2");  // in an election: evidence that none leads
  CHECK(poll_seen(facts.probes, "zoo-0", t0).someone_looking);
  // The restarted server starting up, every other poll timed out: no evidence that none leads.
  auto starting = synthetic::healthy_five();
  for (auto& probe : starting.probes) probe = synthetic::unreachable(probe.address.name);
  starting.probes[2] = synthetic::not_serving("pzoo-2");
  CHECK_FALSE(poll_seen(starting.probes, "pzoo-2", t0).someone_looking);
  CHECK(poll_seen(starting.probes, "zoo-0", t0).someone_looking);
}

namespace {

// A poll counting connections: the restarted server's (none while it is down) and the others'.
PollSeen counted(std::chrono::milliseconds at, bool target_serving, std::optional<std::int64_t> target,
                 std::map<std::string, std::int64_t> others) {
  auto seen = poll(at, "zoo-1", target_serving);
  seen.target_connections = target;
  seen.connections = std::move(others);
  return seen;
}

}  // namespace

TEST_CASE("restart timeline: where the restarted server's connections went, counted from the last poll it served",
          "[books]") {
  RestartTimeline book("zoo-1");
  book.polled(counted(0ms, true, 9, {{"pzoo-0", 1}, {"pzoo-1", 4}}));
  book.polled(counted(100ms, true, 13, {{"pzoo-0", 2}, {"pzoo-1", 4}}));  // the last count before: 12 clients
  CHECK_FALSE(book.timeline(t0 + 100ms).connections_moved.has_value());
  book.polled(counted(200ms, false, std::nullopt, {{"pzoo-0", 2}, {"pzoo-1", 4}}));
  book.polled(counted(700ms, false, std::nullopt, {{"pzoo-0", 9}, {"pzoo-1", 6}}));  // 9 of 12
  auto partly = book.timeline(t0 + 700ms).connections_moved;
  REQUIRE(partly);
  CHECK(partly->clients == 12);
  CHECK(partly->moved() == 9);
  CHECK_FALSE(partly->all);
  CHECK(partly->took == 500ms);
  book.polled(counted(900ms, false, std::nullopt, {{"pzoo-0", 8}, {"pzoo-1", 5}}));  // fewer: the best stays
  CHECK(book.timeline(t0 + 900ms).connections_moved->moved() == 9);
  book.polled(counted(1400ms, false, std::nullopt, {{"pzoo-0", 11}, {"pzoo-1", 7}}));  // 12: all of them
  book.polled(counted(1500ms, false, std::nullopt, {{"pzoo-0", 12}, {"pzoo-1", 7}}));  // the first that did stays
  auto moved = *book.timeline(t0 + 1500ms).connections_moved;
  CHECK(moved.all);
  CHECK(moved.took == 1200ms);
  CHECK(moved.gained == std::map<std::string, std::int64_t>{{"pzoo-0", 9}, {"pzoo-1", 3}});
}

TEST_CASE("restart timeline: once the server serves again its connections are no longer followed", "[books]") {
  RestartTimeline book("zoo-1");
  book.polled(counted(0ms, true, 5, {{"pzoo-0", 1}}));
  book.polled(counted(100ms, false, std::nullopt, {{"pzoo-0", 2}}));
  book.polled(counted(200ms, true, 2, {{"pzoo-0", 2}}));
  book.polled(counted(300ms, false, std::nullopt, {{"pzoo-0", 6}}));  // a second stop: not this step's move
  auto moved = *book.timeline(t0 + 300ms).connections_moved;
  CHECK(moved.clients == 4);
  CHECK(moved.moved() == 1);
  CHECK_FALSE(moved.all);
  // Never counted before it stopped: nothing is said.
  RestartTimeline uncounted("zoo-1");
  uncounted.polled(counted(0ms, false, std::nullopt, {{"pzoo-0", 1}}));
  uncounted.polled(counted(100ms, false, std::nullopt, {{"pzoo-0", 6}}));
  CHECK_FALSE(uncounted.timeline(t0 + 100ms).connections_moved.has_value());
}

TEST_CASE("sidecar book: the first cycle says readiness, leader and verdict, an unchanged one says nothing",
          "[books]") {
  SidecarBook book("pzoo-0", 10s, 5s, t0);
  CHECK(book.status().cycles == 0);
  CHECK_FALSE(book.status().last);
  auto first = book.cycle_ended(cycle_of(synthetic::healthy_five(), "pzoo-0"), t0 + 100ms);
  REQUIRE(first.size() == 3);
  CHECK(first[1] == "leader pzoo-1");
  CHECK(book.cycle_ended(cycle_of(synthetic::healthy_five(), "pzoo-0"), t0 + 10100ms).empty());
  CHECK(book.status().cycles == 2);
  REQUIRE(book.status().last);
  CHECK(book.status().local == "pzoo-0");

  auto facts = synthetic::healthy_five();
  facts.probes[0] = synthetic::unreachable("pzoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto lines = book.cycle_ended(cycle_of(facts, "pzoo-0"), t0 + 20100ms);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::Matchers::Contains("pzoo-0 not ready"));
}

TEST_CASE("sidecar book: alive while a cycle ended within 3 intervals and the timeout, and the next cycle's time",
          "[books]") {
  SidecarBook book("pzoo-0", 10s, 5s, t0);
  CHECK(book.alive(t0 + 35s));
  CHECK_FALSE(book.alive(t0 + 35s + 1ms));
  book.cycle_ended(cycle_of(synthetic::healthy_five(), "pzoo-0"), t0 + 30s);
  CHECK(book.alive(t0 + 65s));
  CHECK(book.next_cycle(t0 + 30s) == t0 + 40s);
}
