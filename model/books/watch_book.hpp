#pragma once
// The watch's bookkeeping as a state machine without I/O (the shape of Boost.Redis's): the driver
// (watch_engine) feeds it what happened to its sessions, writes and read-backs, with the time it
// happened; the book answers which session writes next and which checks are wanted, and queues the
// resulting events for the driver to deliver. No threads, no clock, no sockets: tests drive it with
// synthetic times.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/clock.hpp"
#include "model/facts/errors.hpp"
#include "model/facts/session.hpp"

namespace zkverify {

enum class WatchEventKind {
  connected,          // a session's first connection (detail: the session timeout the server granted)
  disconnected,       // a session lost its server
  reconnected,        // ... and found one again (server: which; duration: how long it was away)
  expired,            // the server expired the session: its ephemeral znodes and watches are gone
  ephemeral_lost,     // a session's ephemeral znode is missing
  write_failed,       // the first failed write of an unavailability window (detail: the error)
  unavailable_start,  // no write has succeeded for a while
  unavailable_end,    // a write succeeded again (duration: the window)
  read_check,         // a read-back through one server found every acknowledged write, in order
  stale_read,         // a read-back missed acknowledged writes, or a client's writes were applied out of order
  read_skipped,       // a read-back could not reach a server
  swept,              // at start: a run node another watch left behind was removed (detail: which, why)
  // watch --clients: a client's registration (detail: which, by whose session)
  client_gone,  // no longer there
  client_back,  // held again (by a new session when the watch began with another: that one ended)
  client_new,   // there, and not when the watch began
};

std::string_view to_string(WatchEventKind kind);

struct WatchEvent {
  std::chrono::system_clock::time_point when;
  std::chrono::milliseconds elapsed{0};  // since the engine started
  WatchEventKind kind = WatchEventKind::connected;
  std::string session;  // the session's name (the server it prefers)
  std::string server;   // the server involved, when one is
  std::string detail;
  std::chrono::milliseconds duration{0};  // windows and disconnects
  Clock::time_point at{};                 // when, on the steady clock: puts the event on another's clock (roll's)
};

struct WatchTotals {
  int sessions = 0;
  int sessions_expired = 0;
  int ephemerals_lost = 0;
  std::chrono::milliseconds negotiated_timeout{0};  // the smallest the servers granted
  long writes_attempted = 0;
  long writes_acked = 0;
  long writes_failed = 0;
  long writes_lost = 0;          // acknowledged, then missing from a read-back after sync
  long writes_out_of_order = 0;  // a client's write applied before one it had sent earlier
  int read_checks = 0;
  int stale_reads = 0;
  std::chrono::milliseconds longest_unavailable{0};  // the longest time without a successful write
  std::chrono::milliseconds longest_disconnect{0};
  std::string run_path;  // the znode the writes went under
};

// When something happened, read once by the driver: the steady time durations are measured with,
// and the wall-clock time events are stamped with.
// Below this gap between two acknowledged writes nobody would call the ensemble unavailable:
// max(250ms, 4 write intervals).
std::chrono::milliseconds unavailability_threshold(double rate);

class WatchBook {
 public:
  // A write the book has counted as attempted: the driver sets `session`'s counter to `value`.
  struct Write {
    std::size_t session = 0;
    long value = 0;
  };
  // How many acknowledgements each session had when a read-back began: the read must find them.
  struct AckedSoFar {
    std::vector<std::size_t> per_session;
  };
  // One server's read-back: every session's counter, read after a sync, or why it was not possible.
  struct ServerRead {
    std::string server;
    ZkError error = ZkError::ok;
    std::vector<std::string> counters;  // in session order, when error is ok
  };

  // One session per name (the name of the server it prefers), all writing under `run_path`.
  WatchBook(std::vector<std::string> session_names, std::string run_path, double rate, Moment started);

  // The run's znodes.
  [[nodiscard]] std::size_t session_count() const { return sessions_.size(); }
  [[nodiscard]] const std::string& session_name(std::size_t session) const;
  [[nodiscard]] const std::string& run_path() const { return totals_.run_path; }
  [[nodiscard]] std::string ephemeral_path(std::size_t session) const;
  [[nodiscard]] std::string counter_path(std::size_t session) const;
  [[nodiscard]] std::vector<std::string> counter_paths() const;
  // Whether a child of a run node is a counter (the other children are the sessions' ephemerals).
  [[nodiscard]] static bool is_counter_name(std::string_view child);

  // Sessions.
  void session_changed(std::size_t session, const SessionEvent& event, Moment now);
  // The driver closes the sessions now: their state changes are its own doing, not news.
  void closing() { closing_ = true; }
  // Sessions away from every server for longer than a third of the session timeout (each once): the
  // driver widens them (Keeper::widen), so that they still find a server before the rest of the
  // timeout runs out when both servers they were opened with are down.
  std::vector<std::size_t> take_sessions_to_widen(Moment now);
  // Sessions connected to a server other than their own (the one they are named after), each at
  // most every two seconds: the driver moves those whose own server accepts a session again back
  // there (Keeper::return_home). A session that failed over otherwise stays where it landed, and
  // that server then holds two of them for the rest of the run.
  std::vector<std::size_t> take_sessions_to_bring_home(Moment now);
  // The driver asked `session` to go home: `moving` when it left, false when it cannot (it stays
  // where it is until it connects elsewhere again).
  void homecoming(std::size_t session, bool moving);
  // The servers that hold two or more of the sessions now: a widened session goes elsewhere.
  [[nodiscard]] std::vector<std::string> crowded_servers() const;
  // The sessions the server has not expired, in order.
  [[nodiscard]] std::vector<std::size_t> live_sessions() const;
  // The first session connected now (not expired); none while every one is away.
  [[nodiscard]] std::optional<std::size_t> connected_session() const;

  // Writes. start_write picks the next session in turn, skipping expired ones (none left: nullopt).
  std::optional<Write> start_write();
  void write_done(const Write& write, ZkError error, std::int32_t version, Moment now);
  [[nodiscard]] long writes_in_flight() const { return writes_in_flight_; }
  // Called after every write started: opens an unavailability window once no write has been
  // acknowledged for longer than the threshold.
  void tick(Moment now);
  // The run is over: a window still open counts up to `now`.
  void settle(Moment now);

  // Checks wanted after a reconnect: the session's ephemeral znode, and a read-back everywhere.
  [[nodiscard]] bool checks_wanted() const { return read_back_wanted_ || !ephemeral_checks_.empty(); }
  std::vector<std::size_t> take_ephemeral_checks();
  bool take_read_back_wanted();
  // The outcome of an exists() on `session`'s ephemeral znode.
  void ephemeral_checked(std::size_t session, ZkError error, Moment now);
  // Take this just before a server's read-back is sent, and judge the read against it.
  [[nodiscard]] AckedSoFar acked_so_far() const;
  // `final`: the read-back at the end, whose missing writes count as lost.
  void read_back_done(const AckedSoFar& before, const ServerRead& read, bool final, Moment now);

  // At start the driver removed `run`, a run node another watch left behind: no session node was
  // left under it, only `counters` counters, and it was created `age` before this run's node.
  void run_swept(const std::string& run, std::size_t counters, std::chrono::milliseconds age, Moment now);

  // --clients: a change of a client's registration the driver saw (a client_gone, client_back or
  // client_new, and what it says), as an event.
  void client_seen(WatchEventKind kind, std::string detail, Moment now);

  // The events produced since the last call, in order.
  std::vector<WatchEvent> take_events();
  [[nodiscard]] const WatchTotals& totals() const { return totals_; }
  // The longest time without a successful write since the last call (or the start), a window still
  // open counted up to `now`; then starts measuring again. A roll's figure per step.
  std::chrono::milliseconds take_longest_unavailable(Moment now);

 private:
  struct Session {
    explicit Session(std::string session_name) : name(std::move(session_name)) {}
    std::string name;
    std::vector<long> acked;  // the values of its acknowledged writes, in the order acknowledged
    std::int32_t last_version = -1;
    bool ever_connected = false;
    bool connected = false;
    bool expired = false;
    bool widened = false;
    bool going_home = false;  // asked to return to its own server, not arrived yet
    bool stays_put = false;   // cannot go home from the server it is on
    std::optional<Clock::time_point> home_asked_at;
    std::optional<Clock::time_point> lost_at;
    std::string server;  // where it is connected now (empty while it is not)
  };

  void record_connection(std::size_t session, const SessionEvent& event, Moment now);
  void record_expiry(std::size_t session, Moment now);
  void write_failed(const Write& write, ZkError error, Moment now);
  void write_acked(const Write& write, std::int32_t version, Moment now);
  void emit(Moment now, WatchEventKind kind, std::string session, std::string server, std::string detail,
            std::chrono::milliseconds duration = std::chrono::milliseconds(0));

  Moment started_;
  std::chrono::milliseconds threshold_;
  std::vector<Session> sessions_;
  bool closing_ = false;
  long next_value_ = 0;
  long writes_in_flight_ = 0;
  std::optional<Clock::time_point> last_ack_;
  bool window_open_ = false;      // no write acknowledged for longer than the threshold
  bool window_reported_ = false;  // a failed write of this window was reported
  bool read_back_wanted_ = false;
  std::vector<std::size_t> ephemeral_checks_;
  std::vector<WatchEvent> events_;
  WatchTotals totals_;
  std::chrono::milliseconds longest_since_taken_{0};  // take_longest_unavailable()'s
};

}  // namespace zkverify
