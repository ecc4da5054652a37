#pragma once
// The watch engine's crew: what its run is made of (the settings, the sessions and their znodes),
// made whole by start() and shared as const from then on, and the blocking work done with it (at
// start on the command's thread, later on the executor's workers). That work waits on sessions and
// reaches the engine's book only through the BookLink it is given (probes/watch_engine: the actor).

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "model/books/watch_book.hpp"
#include "probes/keeper.hpp"
#include "probes/watch_settings.hpp"

namespace zkverify::probes {

struct WatchCrew {
  struct Znodes {
    std::string name;       // the server the session prefers
    std::string ephemeral;  // its ephemeral znode
    std::string counter;    // the node its writes set, to increasing values
  };
  WatchSettings settings;
  KeeperFactory& keepers;  // the process's (or a test's), which outlives every engine
  std::string run_path;
  std::vector<Znodes> znodes;                     // index for index with the sessions
  std::vector<std::shared_ptr<Keeper>> sessions;  // each reaches the engine by a weak reference
};

// How the crew's work reaches the engine's book: a change told to it (applied on its strand, at the
// time it is applied), and what was acknowledged so far, asked of it.
struct BookLink {
  std::function<void(std::function<void(WatchBook&, Moment)>)> tell;
  std::function<WatchBook::AckedSoFar()> acked_so_far;
};

// Each session tries its servers in the order given, like a real client with its own connect string.
KeeperOptions watch_session_options(std::chrono::milliseconds session_timeout);
// Each session's name and znodes, as the book names them.
std::vector<WatchCrew::Znodes> znodes_of(const WatchBook& book);

// One session per server, its own server first, then the others (forwards, or backwards for a roll);
// `on_event(i, event)` hears session i's changes, on the C client's thread.
using SessionEvents = std::function<void(std::size_t, const SessionEvent&)>;
std::vector<std::shared_ptr<Keeper>> open_watch_sessions(const WatchSettings& settings, KeeperFactory& keepers,
                                                         const SessionEvents& on_event);
// start(): every session connected by `deadline`, then the run's znodes; why not, as start() says it.
std::optional<std::string> connect_sessions(const WatchCrew& crew, Clock::time_point deadline);
std::optional<std::string> create_znodes(const WatchCrew& crew, Clock::time_point deadline);
// The run nodes of watches that are gone, removed (a `swept` event each): best effort, one request timeout.
void sweep_abandoned_runs(const BookLink& link, const WatchCrew& crew);

// A check: whether each of `sessions`' ephemerals is still there.
void check_ephemerals(const BookLink& link, const WatchCrew& crew, const std::vector<std::size_t>& sessions);
// A read-back through a session pinned to every server, each judged against the acks before its read.
void read_back_everywhere(const BookLink& link, const WatchCrew& crew, bool final);
// Each of `away` that can go home, sent home once its own server takes a session.
void bring_home(const BookLink& link, const WatchCrew& crew, const std::vector<std::size_t>& away);
// The stop's cleanup: `paths` (the counters) and whatever else is under the run's node, then the node.
void remove_run_znodes(const WatchCrew& crew, std::vector<std::string> paths, std::chrono::milliseconds limit);

}  // namespace zkverify::probes
