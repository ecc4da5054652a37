// The watch's bookkeeping on synthetic times: no threads, no sessions, no clock.

#include <algorithm>

#include <catch2/catch.hpp>

#include "model/books/watch_book.hpp"
#include "model/books/watch_cadence.hpp"
#include "model/books/watch_stop.hpp"

using namespace zkverify;
using std::chrono::milliseconds;

using Kind = WatchEventKind;

namespace {

// `ms` milliseconds after the run started.
Moment moment(long ms) {
  return {Clock::time_point(milliseconds(ms)), std::chrono::system_clock::time_point(milliseconds(ms))};
}

// Three sessions at 50 writes a second: the unavailability threshold is 250ms.
WatchBook three_sessions() { return WatchBook({"a", "b", "c"}, "/zkverify/watch/run", 50, moment(0)); }

SessionEvent connected_to(const std::string& server) { return {SessionState::connected, server, milliseconds(4000)}; }

// Starts the next write and acknowledges it with `version` at `ms`.
WatchBook::Write ack_next(WatchBook& book, std::int32_t version, long ms) {
  auto write = book.start_write();
  REQUIRE(write);
  book.write_done(*write, ZkError::ok, version, moment(ms));
  return *write;
}

std::vector<Kind> kinds(const std::vector<WatchEvent>& events) {
  std::vector<Kind> result;
  std::ranges::transform(events, std::back_inserter(result), &WatchEvent::kind);
  return result;
}

}  // namespace

TEST_CASE("watch book: the run's znodes are named after the sessions") {
  auto book = three_sessions();
  CHECK(book.ephemeral_path(1) == "/zkverify/watch/run/session-b");
  CHECK(book.counter_paths() == std::vector<std::string>{"/zkverify/watch/run/counter-a",
                                                         "/zkverify/watch/run/counter-b",
                                                         "/zkverify/watch/run/counter-c"});
  CHECK(book.totals().sessions == 3);
  CHECK(book.totals().run_path == "/zkverify/watch/run");
  CHECK(unavailability_threshold(50) == milliseconds(250));
  CHECK(unavailability_threshold(1) == milliseconds(4000));
}

TEST_CASE("watch book: writes go through the sessions in turn and in-order acks raise no event") {
  auto book = three_sessions();
  std::vector<std::size_t> writers;
  for (int i = 0; i < 6; ++i) writers.push_back(ack_next(book, i / 3 + 1, 10 * i).session);
  CHECK(writers == std::vector<std::size_t>{1, 2, 0, 1, 2, 0});
  CHECK(book.take_events().empty());
  CHECK(book.totals().writes_attempted == 6);
  CHECK(book.totals().writes_acked == 6);
  CHECK(book.totals().writes_out_of_order == 0);
  CHECK(book.writes_in_flight() == 0);
}

TEST_CASE("watch book: an ack that does not move its counter forward is an out-of-order write") {
  auto book = three_sessions();
  auto first = book.start_write();
  auto second = book.start_write();  // session c
  auto third = book.start_write();   // session a
  auto fourth = book.start_write();  // session b again
  REQUIRE((first && second && third && fourth));
  CHECK(book.writes_in_flight() == 4);
  book.write_done(*fourth, ZkError::ok, 2, moment(10));
  book.write_done(*first, ZkError::ok, 1, moment(20));  // sent first, applied after
  auto events = book.take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == Kind::stale_read);
  CHECK(events[0].session == "b");
  CHECK(events[0].detail == "write 1 was applied as version 1, after version 2");
  CHECK(events[0].elapsed == milliseconds(20));
  CHECK(book.totals().writes_out_of_order == 1);
  CHECK(book.writes_in_flight() == 2);
}

TEST_CASE("watch book: a window opens after the threshold without an ack and the next ack closes it") {
  auto book = three_sessions();
  book.tick(moment(1000));  // nothing acknowledged yet: no window to speak of
  ack_next(book, 1, 1000);
  book.tick(moment(1250));  // exactly the threshold: not yet
  CHECK(book.take_events().empty());
  book.tick(moment(1300));
  book.tick(moment(1500));  // already open
  auto events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::unavailable_start});
  CHECK(events[0].duration == milliseconds(300));

  ack_next(book, 1, 1900);
  events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::unavailable_end});
  CHECK(events[0].duration == milliseconds(900));
  CHECK(events[0].detail == "writes succeed again after 900ms");
  CHECK(book.totals().longest_unavailable == milliseconds(900));

  ack_next(book, 1, 2000);  // a short gap: counted, but no window
  CHECK(book.take_events().empty());
  CHECK(book.totals().longest_unavailable == milliseconds(900));
}

TEST_CASE("watch book: a write failure is reported once per window, every failure is counted") {
  auto book = three_sessions();
  ack_next(book, 1, 0);
  for (long ms : {100, 200}) {
    auto write = book.start_write();
    REQUIRE(write);
    book.write_done(*write, ZkError::connection_loss, 0, moment(ms));
  }
  auto events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::write_failed});
  CHECK(events[0].detail == "write 2 failed: connection_loss");

  ack_next(book, 2, 300);  // the window is over: the next failure is news again
  auto write = book.start_write();
  REQUIRE(write);
  book.write_done(*write, ZkError::operation_timeout, 0, moment(400));
  CHECK(kinds(book.take_events()) == std::vector<Kind>{Kind::write_failed});
  CHECK(book.totals().writes_failed == 3);
  CHECK(book.totals().writes_acked == 2);
}

TEST_CASE("watch book: a disconnect and a reconnect are timed and want an ephemeral check and a read-back") {
  auto book = three_sessions();
  book.session_changed(0, connected_to("s1"), moment(0));
  book.session_changed(1, {SessionState::connected, "s2", milliseconds(3000)}, moment(5));
  CHECK_FALSE(book.checks_wanted());
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(200));  // still away
  book.session_changed(0, connected_to("s2"), moment(350));

  auto events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::connected, Kind::connected, Kind::disconnected, Kind::reconnected});
  CHECK(events[0].server == "s1");
  CHECK(events[0].detail == "session timeout 4000ms");
  CHECK(events[2].session == "a");
  CHECK(events[3].server == "s2");
  CHECK(events[3].duration == milliseconds(250));
  CHECK(events[3].detail == "after 250ms (session timeout 3000ms)");
  CHECK(book.totals().longest_disconnect == milliseconds(250));
  CHECK(book.totals().negotiated_timeout == milliseconds(3000));

  REQUIRE(book.checks_wanted());
  CHECK(book.take_ephemeral_checks() == std::vector<std::size_t>{0});
  CHECK(book.take_read_back_wanted());
  CHECK_FALSE(book.take_read_back_wanted());
  CHECK_FALSE(book.checks_wanted());

  book.ephemeral_checked(0, ZkError::ok, moment(400));
  book.ephemeral_checked(0, ZkError::connection_loss, moment(400));  // says nothing about the node
  CHECK(book.take_events().empty());
  book.ephemeral_checked(0, ZkError::no_node, moment(400));
  events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::ephemeral_lost});
  CHECK(events[0].detail == "/zkverify/watch/run/session-a");
  CHECK(book.totals().ephemerals_lost == 1);
}

TEST_CASE("watch book: a session away for a third of the session timeout is widened once") {
  auto book = three_sessions();
  for (std::size_t i = 0; i < 3; ++i)
    book.session_changed(i, {SessionState::connected, "s", milliseconds(3000)}, moment(0));
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  book.session_changed(1, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  CHECK(book.take_sessions_to_widen(moment(1099)).empty());   // 999ms away: under 3000ms / 3
  book.session_changed(1, connected_to("s3"), moment(1050));  // back in time: nothing to widen
  CHECK(book.take_sessions_to_widen(moment(1100)) == std::vector<std::size_t>{0});
  CHECK(book.take_sessions_to_widen(moment(2500)).empty());  // once: the session stays widened
  book.session_changed(0, connected_to("s3"), moment(2600));
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(3000));
  CHECK(book.take_sessions_to_widen(moment(9000)).empty());
  book.session_changed(2, {SessionState::connecting, "", milliseconds(0)}, moment(3000));
  book.closing();  // the driver's own close is no reason to widen
  CHECK(book.take_sessions_to_widen(moment(9000)).empty());
}

// Sessions are named after their own servers here: "a" belongs on "a".
TEST_CASE("watch book: a session that failed over is asked home every two seconds until it goes or cannot") {
  auto book = three_sessions();
  book.session_changed(0, connected_to("a"), moment(0));
  book.session_changed(1, connected_to("b"), moment(0));
  CHECK(book.take_sessions_to_bring_home(moment(10)).empty());  // every session is at home
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  CHECK(book.take_sessions_to_bring_home(moment(150)).empty());  // not connected anywhere: nothing to move
  book.session_changed(0, connected_to("b"), moment(200));
  CHECK(book.take_sessions_to_bring_home(moment(200)) == std::vector<std::size_t>{0});
  CHECK(book.take_sessions_to_bring_home(moment(2199)).empty());  // its server did not serve yet: not before 2 s
  CHECK(book.take_sessions_to_bring_home(moment(2200)) == std::vector<std::size_t>{0});

  book.homecoming(0, true);
  CHECK(book.take_sessions_to_bring_home(moment(9000)).empty());  // on its way
  book.take_events();
  book.take_read_back_wanted();
  book.take_ephemeral_checks();
  // The C client moves it without saying it was between servers: where it arrived is the news.
  book.session_changed(0, connected_to("a"), moment(2350));
  auto events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::reconnected});
  CHECK(events[0].server == "a");
  CHECK(events[0].detail == "back on its own server after 0ms (session timeout 4000ms)");
  CHECK(book.take_read_back_wanted());  // a move is a reconnect: look whether anything went
  CHECK(book.take_ephemeral_checks() == std::vector<std::size_t>{0});
  book.session_changed(0, connected_to("a"), moment(2360));  // the same server again: no news
  CHECK(book.take_events().empty());

  // One that cannot move from where it is (one address for every server) is not asked again there.
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(3000));
  book.session_changed(0, connected_to("c"), moment(3100));
  CHECK(book.take_sessions_to_bring_home(moment(3100)).empty());  // 2 s after the last ask, whatever happened since
  CHECK(book.take_sessions_to_bring_home(moment(4200)) == std::vector<std::size_t>{0});
  book.homecoming(0, false);
  CHECK(book.take_sessions_to_bring_home(moment(20000)).empty());
  CHECK(book.take_events().back().detail == "after 100ms (session timeout 4000ms)");
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(21000));
  book.session_changed(0, connected_to("b"), moment(21100));  // landed elsewhere again: asked again
  CHECK(book.take_sessions_to_bring_home(moment(21100)) == std::vector<std::size_t>{0});
  book.closing();
  CHECK(book.take_sessions_to_bring_home(moment(40000)).empty());
}

// Asked home, it fails over again on the way (its server went down): it may widen again.
TEST_CASE("watch book: a session sent home may be widened again") {
  auto book = three_sessions();
  book.session_changed(0, {SessionState::connected, "a", milliseconds(3000)}, moment(0));
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  CHECK(book.take_sessions_to_widen(moment(1100)) == std::vector<std::size_t>{0});
  book.session_changed(0, connected_to("c"), moment(1200));
  REQUIRE(book.take_sessions_to_bring_home(moment(1300)) == std::vector<std::size_t>{0});
  book.homecoming(0, true);
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(1400));
  CHECK(book.take_sessions_to_widen(moment(2399)).empty());
  CHECK(book.take_sessions_to_widen(moment(2400)) == std::vector<std::size_t>{0});
}

TEST_CASE("watch book: an expiry is counted once and the expired session writes no more") {
  auto book = three_sessions();
  book.session_changed(2, connected_to("s3"), moment(0));
  book.session_changed(2, {SessionState::expired, "", milliseconds(0)}, moment(100));
  book.session_changed(2, {SessionState::expired, "", milliseconds(0)}, moment(150));
  auto events = book.take_events();
  REQUIRE(kinds(events) == std::vector<Kind>{Kind::connected, Kind::expired, Kind::ephemeral_lost});
  CHECK(events[1].session == "c");
  CHECK(events[2].detail == "/zkverify/watch/run/session-c");
  CHECK(book.totals().sessions_expired == 1);
  CHECK(book.totals().ephemerals_lost == 1);
  CHECK(book.live_sessions() == std::vector<std::size_t>{0, 1});

  book.ephemeral_checked(2, ZkError::no_node, moment(200));  // already counted with the expiry
  CHECK(book.totals().ephemerals_lost == 1);
  for (int i = 0; i < 6; ++i) CHECK(ack_next(book, 1 + i, 300).session != 2);

  book.session_changed(0, {SessionState::expired, "", milliseconds(0)}, moment(400));
  book.session_changed(1, {SessionState::expired, "", milliseconds(0)}, moment(400));
  CHECK_FALSE(book.start_write());
}

TEST_CASE("watch book: session changes during the driver's own close are not news") {
  auto book = three_sessions();
  book.session_changed(0, connected_to("s1"), moment(0));
  book.take_events();
  book.closing();
  book.session_changed(0, {SessionState::connecting, "", milliseconds(0)}, moment(100));
  book.session_changed(0, {SessionState::expired, "", milliseconds(0)}, moment(100));
  CHECK(book.take_events().empty());
  CHECK(book.totals().sessions_expired == 0);
}

TEST_CASE("watch book: a read-back is judged against the acks recorded before it began") {
  auto book = three_sessions();
  ack_next(book, 1, 0);  // 1 through b
  ack_next(book, 1, 0);  // 2 through c
  ack_next(book, 1, 0);  // 3 through a
  ack_next(book, 2, 0);  // 4 through b
  auto before = book.acked_so_far();
  ack_next(book, 2, 10);  // 5 through c: after the read began, so not expected

  SECTION("every acked write present") {
    book.read_back_done(before, {"s1", ZkError::ok, {"3", "4", "2"}}, false, moment(20));
    auto events = book.take_events();
    REQUIRE(kinds(events) == std::vector<Kind>{Kind::read_check});
    CHECK(events[0].server == "s1");
    CHECK(events[0].detail == "4 acknowledged writes present");
    CHECK(book.totals().read_checks == 1);
    CHECK(book.totals().stale_reads == 0);
  }
  SECTION("a counter below an acked value is a stale read, not yet a loss") {
    book.read_back_done(before, {"s2", ZkError::ok, {"3", "1", "2"}}, false, moment(20));
    auto events = book.take_events();
    REQUIRE(kinds(events) == std::vector<Kind>{Kind::stale_read});
    CHECK(events[0].server == "s2");
    CHECK(events[0].detail == "1 of 4 acknowledged writes missing after sync (first: write 4 of session b)");
    CHECK(book.totals().stale_reads == 1);
    CHECK(book.totals().writes_lost == 0);
  }
  SECTION("the final read-back's missing writes are lost: the most any server missed") {
    book.read_back_done(before, {"s1", ZkError::ok, {"0", "1", "2"}}, true, moment(20));
    book.read_back_done(before, {"s2", ZkError::ok, {"3", "4", "2"}}, true, moment(20));
    auto events = book.take_events();
    REQUIRE(kinds(events) == std::vector<Kind>{Kind::stale_read, Kind::read_check});
    CHECK(events[0].detail == "2 of 4 acknowledged writes missing after sync (first: write 3 of session a)");
    CHECK(events[1].detail == "4 acknowledged writes present (final)");
    CHECK(book.totals().writes_lost == 2);
    CHECK(book.totals().read_checks == 2);
  }
  SECTION("a server that could not be read is skipped, not judged") {
    book.read_back_done(before, {"s3", ZkError::deadline_exceeded, {}}, true, moment(20));
    auto events = book.take_events();
    REQUIRE(kinds(events) == std::vector<Kind>{Kind::read_skipped});
    CHECK(events[0].detail == "read-back not possible: deadline_exceeded");
    CHECK(book.totals().read_checks == 0);
  }
}

TEST_CASE("watch book: a window still open moment the end counts up to the end") {
  auto book = three_sessions();
  ack_next(book, 1, 0);
  ack_next(book, 1, 100);
  book.settle(moment(5000));  // no window open: the quiet end of a run is not unavailability
  CHECK(book.totals().longest_unavailable == milliseconds(100));

  book.tick(moment(5000));
  book.settle(moment(7000));
  CHECK(book.totals().longest_unavailable == milliseconds(6900));
}

// The engine's stop, sans I/O: which stages a run needs, in order, and how long each may take.
TEST_CASE("watch stop: a run that started settles, checks, closes, removes and delivers, each bounded") {
  WatchStop stop({true, true, true, milliseconds(400), std::nullopt});
  std::vector<StopStage> stages;
  std::vector<milliseconds> bounds;
  for (; !stop.finished(); stop.advance(true)) {
    stages.push_back(stop.stage());
    bounds.push_back(stop.bound());
  }
  CHECK(stages == std::vector{StopStage::quiesce, StopStage::settle, StopStage::final_checks, StopStage::close_sessions,
                              StopStage::remove_znodes, StopStage::deliver});
  CHECK(bounds == std::vector{milliseconds(1600), milliseconds(400), milliseconds(1600), milliseconds(400),
                              milliseconds(800), milliseconds(1000)});
  CHECK(WatchStop({true, true, true, milliseconds(400), std::nullopt}).total_bound() == milliseconds(5800));
  CHECK(stop.abandoned().empty());
  CHECK(stop.bound() == milliseconds(0));
}

TEST_CASE("watch stop: a quick stop skips the final checks, and its cleanup limit bounds closing and removing") {
  WatchStop stop({true, false, true, milliseconds(3000), milliseconds(300)});
  CHECK(stop.advance(false) == StopStage::close_sessions);  // past settle and the final checks
  CHECK(stop.bound() == milliseconds(300));
  CHECK(stop.advance(true) == StopStage::remove_znodes);
  CHECK(stop.bound() == milliseconds(600));
  CHECK(stop.advance(false) == StopStage::deliver);
  CHECK(stop.bound() == milliseconds(1000));  // a busy machine's delivery is no bug: never under a second
  CHECK(stop.advance(true) == StopStage::done);
  CHECK(stop.abandoned() == std::vector{StopStage::quiesce, StopStage::remove_znodes});
  CHECK(stop.advance(false) == StopStage::done);  // done stays done, and nothing more is abandoned
  CHECK(stop.abandoned().size() == 2);
}

TEST_CASE("watch stop: a start that failed before creating anything only closes and delivers") {
  WatchStop stop({false, true, false, milliseconds(3000), std::nullopt});
  CHECK(stop.advance(true) == StopStage::close_sessions);
  CHECK(stop.advance(true) == StopStage::deliver);
  CHECK(stop.advance(true) == StopStage::done);
  CHECK(WatchStop({false, true, false, milliseconds(3000), std::nullopt}).total_bound() == milliseconds(18000));
  CHECK(WatchStop({false, true, true, milliseconds(3000), std::nullopt}).total_bound() == milliseconds(24000));
  CHECK(to_string(StopStage::remove_znodes) == "remove_znodes");
}

// When the engine writes and checks, fed the time.
TEST_CASE("watch cadence: writes keep their rate, and after a stall start again without a burst") {
  WatchCadence cadence(20);
  const Clock::time_point t0{};
  CHECK(cadence.next_write(t0, t0) == t0 + milliseconds(50));
  CHECK(cadence.next_write(t0 + milliseconds(50), t0 + milliseconds(60)) == t0 + milliseconds(100));
  CHECK(cadence.next_write(t0 + milliseconds(50), t0 + milliseconds(900)) == t0 + milliseconds(900));
}

TEST_CASE("watch cadence: one check at a time, at most one per gap, none once stopped") {
  WatchCadence cadence(20, milliseconds(500));
  const Clock::time_point t0{};
  using Start = WatchCadence::Start;
  CHECK(cadence.check(false, t0).start == Start::no);  // none wanted
  CHECK(cadence.check(true, t0).start == Start::now);
  CHECK(cadence.busy());
  CHECK(cadence.check(true, t0 + milliseconds(10)).start == Start::no);  // one runs
  cadence.check_ended(t0 + milliseconds(100));
  CHECK_FALSE(cadence.busy());
  auto soon = cadence.check(true, t0 + milliseconds(200));
  CHECK(soon.start == Start::later);
  CHECK(soon.at == t0 + milliseconds(600));
  CHECK(cadence.check(true, t0 + milliseconds(600)).start == Start::now);
  cadence.check_ended(t0 + milliseconds(700));

  CHECK(cadence.start_homing());
  CHECK_FALSE(cadence.start_homing());  // one move home at a time
  CHECK(cadence.busy());
  cadence.homing_ended();
  cadence.stop();
  CHECK_FALSE(cadence.start_homing());
  CHECK(cadence.check(true, t0 + milliseconds(5000)).start == Start::no);
  CHECK_FALSE(cadence.busy());
}

TEST_CASE("watch cadence: one round of following at a time, and a change during one asks for one more") {
  WatchCadence cadence(20);
  CHECK(cadence.start_follow());
  CHECK(cadence.busy());
  CHECK_FALSE(cadence.follow_ended());  // nothing changed meanwhile: no round due
  CHECK(cadence.start_follow());
  CHECK_FALSE(cadence.start_follow());  // a watch fired during the round
  CHECK_FALSE(cadence.start_follow());  // twice: still one more, not two
  CHECK(cadence.follow_ended());
  CHECK(cadence.start_follow());
  CHECK_FALSE(cadence.follow_ended());
  CHECK(cadence.start_follow());
  CHECK_FALSE(cadence.start_follow());
  cadence.stop();
  CHECK_FALSE(cadence.follow_ended());  // stopped: no round after it
  CHECK_FALSE(cadence.start_follow());
  CHECK_FALSE(cadence.busy());
}
