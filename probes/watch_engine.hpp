#pragma once
// The watch engine: client sessions that live through restarts the way real clients do, a writer of
// ordered acknowledged writes, and read-backs that check none was lost. A thin driver around the
// books (model/books: WatchBook keeps the bookkeeping, WatchCadence the pace, WatchStop the stop's
// stages): this file owns the timers on the executor and the stop's sequence; watch_crew.hpp the
// sessions and the blocking work with them. It reports what happens as events (facts, with
// timestamps) and totals; verifier/ decides what they mean.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "model/books/registration_log.hpp"
#include "model/books/watch_book.hpp"
#include "model/books/watch_stop.hpp"
#include "probes/executor.hpp"
#include "probes/keeper.hpp"
#include "probes/stop_signals.hpp"
#include "probes/watch_settings.hpp"

namespace zkverify::probes {

// --clients: the registrations as the engine followed them.
struct ClientsFollowed {
  std::vector<ClientPathRead> first;  // the look at start()
  std::vector<ClientPathRead> last;   // the last registrations read of each path (remember_client_reads)
  std::vector<ClientPathRead> now;    // the last round's reads, errors and all
  std::vector<RegistrationAbsence> absences;
};

// An actor (probes/actor.hpp); this class is the command's handle on it, used from one thread. What
// the command needs from the engine comes back as answers (totals(), events()); it reads nothing of
// the engine's.
class WatchEngine {
 public:
  // Called on a strand of its own, one event at a time, in the order they happened. It must return
  // promptly (commands hand the text to the process's output actor), and own what it uses: a stop
  // that found it stuck past its bound goes on without it.
  using Sink = std::function<void(const WatchEvent&)>;

  WatchEngine(WatchSettings settings, Executor& executor, KeeperFactory& keepers, Sink sink);
  ~WatchEngine();  // stop()s if needed
  WatchEngine(const WatchEngine&) = delete;
  WatchEngine& operator=(const WatchEngine&) = delete;

  // Connects one session per server (each to its own server first, the others as fallback, in list
  // order), creates the run's znodes, sweeps away the run nodes of watches that are gone (a `swept`
  // event each), reads the clients' registrations (--clients) and starts writing (and following them). Returns an error
  // text when it cannot; stop() (or the destructor) then removes whatever it created. Call it once.
  std::optional<std::string> start(Clock::time_point deadline);
  // Stops writing, lets the writes in flight settle, reads back through every server, closes the
  // sessions and removes the run's znodes (also after a start() that failed half-way), then lets the
  // sink see every event: one sequence on the engine's strand (model/books/watch_stop), each stage
  // bounded, so it returns within the sum of the bounds. Idempotent; from one thread.
  void stop();
  // For a stop signal: as stop(), without settling and the final checks, and closing and removing
  // bounded by `step_limit`.
  void stop_quickly(std::chrono::milliseconds step_limit);
  WatchTotals totals() const;
  // Every event so far, in order, when the settings keep them (else none).
  std::vector<WatchEvent> events() const;
  // --clients: what the engine saw of the registrations so far (nothing without client paths).
  ClientsFollowed clients() const;
  // --clients: until each registration in `awaited` (their paths) is held again, by whichever session,
  // as the engine's rounds read them (its child watches say when to read), or `deadline`, or the
  // `nth` stop of `signals` (none: no stop). Then the last registrations read of each path.
  std::vector<ClientPathRead> await_registrations(const std::vector<std::string>& awaited, Clock::time_point deadline,
                                                  StopSignals* signals, int nth = 1);
  // The stop's stages that were abandoned at their bound (none until stop() ran).
  std::vector<StopStage> stop_abandoned() const;
  // WatchBook::take_longest_unavailable, now.
  std::chrono::milliseconds take_longest_unavailable();

  struct Engine;  // the actor (watch_engine.cpp)

 private:
  WatchSettings settings_;
  Executor& executor_;
  KeeperFactory& keepers_;
  Sink sink_;  // handed to the engine at start()
  std::shared_ptr<Engine> engine_;
  bool created_ = false;  // start() sent a create: stop() has znodes to remove
  bool running_ = false;  // start() succeeded: the writer runs
  bool stopped_ = false;
  bool final_checks_ = true;                                // stop() checks; stop_quickly() does not
  std::optional<std::chrono::milliseconds> cleanup_limit_;  // stop_quickly()'s, else the request timeout
};

}  // namespace zkverify::probes
