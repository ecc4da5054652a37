#pragma once
// The watch engine: client sessions that live through restarts the way real clients do, a writer of
// ordered acknowledged writes, and read-backs that check none was lost. It reports what happens as
// events (facts, with timestamps) and totals; verifier/ decides what they mean.

#include "probes/io.hpp"
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "probes/facts.hpp"
#include "probes/zk_session.hpp"

namespace zkverify::probes {

enum class WatchEventKind {
  connected,           // a session's first connection (detail: the session timeout the server granted)
  disconnected,        // a session lost its server
  reconnected,         // ... and found one again (server: which; duration: how long it was away)
  expired,             // the server expired the session: its ephemeral znodes and watches are gone
  ephemeral_lost,      // a session's ephemeral znode is missing
  write_failed,        // the first failed write of an unavailability window (detail: the error)
  unavailable_start,   // no write has succeeded for a while
  unavailable_end,     // a write succeeded again (duration: the window)
  read_check,          // a read-back through one server found every acknowledged write, in order
  stale_read,          // a read-back missed acknowledged writes, or a client's writes were applied out of order
  read_skipped,        // a read-back could not reach a server
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
};

struct WatchSettings {
  std::vector<ServerAddress> servers;
  std::string namespace_path = "/zkverify";
  double rate = 20;  // writes per second
  std::chrono::milliseconds session_timeout{10000};
  std::chrono::milliseconds request_timeout{3000};  // one read-back or cleanup step
};

struct WatchTotals {
  int sessions = 0;
  int sessions_expired = 0;
  int ephemerals_lost = 0;
  std::chrono::milliseconds negotiated_timeout{0};  // the smallest the servers granted
  long writes_attempted = 0;
  long writes_acked = 0;
  long writes_failed = 0;
  long writes_lost = 0;  // acknowledged, then missing from a read-back after sync
  long writes_out_of_order = 0;  // a client's write applied before one it had sent earlier
  int read_checks = 0;
  int stale_reads = 0;
  std::chrono::milliseconds longest_unavailable{0};  // the longest time without a successful write
  std::chrono::milliseconds longest_disconnect{0};
  std::string run_path;  // the znode the writes went under
};

class WatchEngine {
 public:
  using Sink = std::function<void(const WatchEvent&)>;  // called from the engine's threads, one at a time

  WatchEngine(WatchSettings settings, Sink sink);
  ~WatchEngine();  // stop()s if needed
  WatchEngine(const WatchEngine&) = delete;
  WatchEngine& operator=(const WatchEngine&) = delete;

  // Connects one session per server (each to its own server first, the others as fallback, in list
  // order), creates the run's znodes and starts writing. Returns an error text when it cannot.
  std::optional<std::string> start(Clock::time_point deadline);
  // Stops writing, waits for the writes in flight, reads back through every server, removes the
  // run's znodes and closes the sessions. Idempotent.
  void stop();
  WatchTotals totals() const;

 private:
  struct Session;
  void emit(WatchEventKind kind, const std::string& session, const std::string& server, std::string detail,
            std::chrono::milliseconds duration = std::chrono::milliseconds(0));
  void on_state(Session& session, int state, const std::string& server, std::chrono::milliseconds granted);
  void writer_loop();
  void checker_loop();
  void write_one();
  void on_write_done(Session& session, long value, ZkError error, std::int32_t version);
  void read_back_everywhere(bool final);
  void finish_run();       // the final checks and the removal of the writes
  void remove_run_node();  // the run's node, once its children are gone
  std::string name_of_endpoint(const std::string& endpoint) const;

  WatchSettings settings_;
  Sink sink_;
  Clock::time_point started_;
  std::string run_path_;
  std::vector<std::unique_ptr<Session>> sessions_;

  mutable std::mutex mutex_;  // guards everything below and serialises the sink
  std::condition_variable wake_checker_;
  bool stopping_ = false;
  bool stopped_ = false;
  bool closing_ = false;
  bool read_back_wanted_ = false;
  std::vector<Session*> ephemeral_checks_;
  long next_value_ = 0;
  std::map<long, Clock::time_point> in_flight_;
  std::optional<Clock::time_point> last_ack_;
  std::optional<Clock::time_point> window_since_;  // set while no write succeeds
  bool window_reported_ = false;
  WatchTotals totals_;
  std::thread writer_;
  std::thread checker_;
};

}  // namespace zkverify::probes
