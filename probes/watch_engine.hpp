#pragma once
// The watch engine: client sessions that live through restarts the way real clients do, a writer of
// ordered acknowledged writes, and read-backs that check none was lost. A thin driver around
// WatchBook, which does all the bookkeeping: this file owns the sessions (Keepers), the timers on
// the executor, the waits and the cleanup. It reports what happens as events (facts, with
// timestamps) and totals; verifier/ decides what they mean.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "model/books/watch_book.hpp"
#include "probes/executor.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes {

struct WatchSettings {
  std::vector<ServerAddress> servers;
  std::string namespace_path = "/zkverify";
  double rate = 20;  // writes per second
  std::chrono::milliseconds session_timeout{10000};
  std::chrono::milliseconds request_timeout{3000};  // one read-back or cleanup step
  // At start, a run node another watch left behind is removed once no session node is left under it
  // and it is at least this old: a younger one may be a watch still creating its session nodes.
  std::chrono::milliseconds sweep_age{60000};
  // Each session's fallbacks: the servers listed after its own (false), or before it, nearest first
  // (true). A roll lists the servers in its order and fails over backwards, so a session whose server
  // restarts moves to one already restarted instead of the next, and displaced sessions never pile
  // up on one server (its maxClientCnxns) as the roll goes on.
  bool fail_over_backwards = false;
};

// An actor (probes/actor.hpp); this class is the command's handle on it, used from one thread.
class WatchEngine {
 public:
  // Called on a strand of its own, one event at a time, in the order they happened. It must return
  // promptly (commands hand the text to the process's output actor); stop() waits for its last call.
  using Sink = std::function<void(const WatchEvent&)>;

  WatchEngine(WatchSettings settings, Executor& executor, KeeperFactory& keepers, Sink sink);
  ~WatchEngine();  // stop()s if needed
  WatchEngine(const WatchEngine&) = delete;
  WatchEngine& operator=(const WatchEngine&) = delete;

  // Connects one session per server (each to its own server first, the others as fallback, in list
  // order), creates the run's znodes, sweeps away the run nodes of watches that are gone (a `swept`
  // event each) and starts writing. Returns an error text when it cannot; stop() (or the
  // destructor) then removes whatever it created. Call it once.
  std::optional<std::string> start(Clock::time_point deadline);
  // Stops writing, waits for the writes in flight, reads back through every server, closes the
  // sessions and removes the run's znodes (also after a start() that failed half-way); the sink has
  // seen every event when it returns. Each step is bounded by the request timeout, so a hung server
  // delays it by a few of them at most. Idempotent; not to be called concurrently with itself.
  void stop();
  // For a stop signal: as stop(), without the final checks (no settling, no read-back), and each
  // cleanup step (closing the sessions, removing the znodes) bounded by `step_limit`.
  void stop_quickly(std::chrono::milliseconds step_limit);
  WatchTotals totals() const;
  // WatchBook::take_longest_unavailable, now.
  std::chrono::milliseconds take_longest_unavailable();

  struct Engine;  // the actor (watch_engine.cpp)
  struct SessionZnodes {
    std::string name;       // the server the session prefers
    std::string ephemeral;  // its ephemeral znode
    std::string counter;    // the node its writes set, to increasing values
  };

 private:
  struct AbandonedRun;

  std::vector<std::shared_ptr<Keeper>> open_sessions();
  std::optional<std::string> connect_sessions(Clock::time_point deadline);
  std::optional<std::string> create_znodes(Clock::time_point deadline);
  void sweep_abandoned_runs();
  std::vector<AbandonedRun> find_abandoned_runs(Keeper& keeper, Clock::time_point deadline) const;
  void stop_writing_and_checking();
  void finish_run();
  void settle_writes();
  void close_sessions();
  void remove_run_znodes();
  void end_delivery();

  WatchSettings settings_;
  Executor& executor_;
  KeeperFactory& keepers_;
  Sink sink_;  // handed to the engine at start()
  // The book, the sessions and what the timers and the checks touch, on the engine's strand: the
  // sessions' callbacks, the timers and the checks own it, since one can come after stop() returned.
  std::shared_ptr<Engine> engine_;
  bool creates_sent_ = false;  // create_znodes() sent a create: stop() has znodes to remove
  bool running_ = false;       // start() succeeded: the writer runs
  bool stopped_ = false;
  bool final_checks_ = true;                                // stop() checks; stop_quickly() does not
  std::optional<std::chrono::milliseconds> cleanup_limit_;  // stop_quickly()'s, else the request timeout
};

}  // namespace zkverify::probes
