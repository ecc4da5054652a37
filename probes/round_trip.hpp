#pragma once
// The write/read round trip: one ephemeral-sequential znode written through one server, then read
// through a session pinned to each server after a sync, and deleted. The same sessions read the
// durability marker, a persistent znode whose creation the ledger remembers.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "model/facts/facts.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes {

struct RoundTripPlan {
  std::vector<ServerAddress> servers;         // the servers to read through (all serving ones)
  std::size_t writer = 0;                     // index into servers of the one to write through
  std::string namespace_path;                 // e.g. "/zkverify": created if missing; its parent must exist
  bool write = true;                          // false: write nothing, only read the marker
  std::string payload;                        // the bytes written, compared on every read
  std::string marker_path;                    // empty: no marker read
  std::optional<std::string> marker_content;  // create the marker with this content if it is missing
  Clock::time_point deadline;
  // When closing the sessions must have ended (they are closed together); default: `deadline`.
  Clock::time_point close_deadline{};
  std::chrono::milliseconds session_timeout{10000};
  std::vector<std::string> client_paths;  // --clients: read through the writer (client_reads.hpp)
};

// Sessions opened before the round trip is planned: each as soon as its server was reported by
// probe_servers, so that they connect while the servers are still being probed (for quorum beside
// the server's remaining words, one at a time: two connections at most). The round trip takes those
// its plan names and closes the others with its own. Not thread-safe: open from one thread at a
// time, and hand it to the round trip through a lock (gather's ReportedProbes).
class SessionsAhead {
 public:
  SessionsAhead(KeeperFactory& keepers, std::chrono::milliseconds session_timeout);
  ~SessionsAhead();  // closes any session no round trip took, bounded as Keeper's destructor is
  SessionsAhead(const SessionsAhead&) = delete;
  SessionsAhead& operator=(const SessionsAhead&) = delete;

  // Starts a session pinned to `server` (once per server name; later calls are ignored).
  void open(const ServerAddress& server);

  struct State;  // the sessions and the state changes they report (round_trip.cpp)
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// The servers a round trip reads through: those srvr says serve (leader, follower or observer).
bool joins_round_trip(const ServerProbe& probe);

// Runs the plan with sessions from `keepers`, one pinned to each server (taken from `ahead` where it
// opened one). Sessions connect concurrently, reads run concurrently; each read's outcome is
// reported separately, so one stalled server does not fail the others. Returns by the close deadline.
RoundTrip run_round_trip(const RoundTripPlan& plan, KeeperFactory& keepers, SessionsAhead* ahead = nullptr);

// The znode name prefix under the namespace; the server appends a sequence number.
inline constexpr std::string_view kRoundTripPrefix = "/roundtrip-";

}  // namespace zkverify::probes
