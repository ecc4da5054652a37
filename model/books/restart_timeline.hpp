#pragma once
// What polling every server's srvr during one server's restart tells, sans I/O: when the server
// stopped and started serving again, whether the restart really happened, and who led when. Fed
// one poll at a time with the time it was taken (step's poller polls; tests feed it directly).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/facts/clock.hpp"
#include "model/facts/facts.hpp"

namespace zkverify {

// What one poll of every server's srvr showed.
struct PollSeen {
  Clock::time_point at;
  std::optional<std::string> leader;                // the server that said it leads
  bool someone_follows = false;                     // a follower or observer answered: a leader holds a quorum
  bool target_serving = false;                      // the server being restarted serves
  std::optional<std::int64_t> target_received;      // its srvr "Received" count
  bool someone_looking = false;                     // a server answered that it does not serve (an election)
  std::optional<std::int64_t> target_connections;   // its srvr "Connections" (the poll's own among them)
  std::map<std::string, std::int64_t> connections;  // the other servers' that answered
};

// A poll's probes as PollSeen, for the restart of `target`.
PollSeen poll_seen(const std::vector<ServerProbe>& probed, const std::string& target, Clock::time_point at);

// Where the restarted server's client connections went once it stopped serving: the other servers'
// srvr counts against theirs at the last poll that found it serving (the poll's own connection is
// in each count, so it cancels out).
struct ConnectionsMoved {
  std::int64_t clients = 0;                    // the restarted server's, the poll's own not counted
  std::map<std::string, std::int64_t> gained;  // each other server's gain, at `took`
  std::chrono::milliseconds took{0};           // from the first poll that found it not serving
  bool all = false;                            // the gains covered every one of `clients`
  [[nodiscard]] std::int64_t moved() const;
};

// What the polls saw while a step ran.
struct StepTimeline {
  std::optional<std::chrono::milliseconds> downtime;  // the longest time the server did not serve
  std::optional<std::string> leader_before, leader_after;
  // The longest time no leader was seen: from the last poll that showed the old leader leading
  // to the first that showed a leader again (a new one, or the same after polls that showed none).
  std::chrono::milliseconds longest_leaderless{0};
  // Of it, the time no poll could tell either way: a refused srvr, or followers without their leader.
  std::chrono::milliseconds leaderless_unobserved{0};
  using Span = std::pair<Clock::time_point, Clock::time_point>;
  std::optional<Span> down_window, leaderless_window;  // when (for roll's timeline)
  // The server was seen not serving in two polls in a row, or its srvr "Received" count fell (it
  // counts from zero again after a restart): the restart happened, not just a COMMAND that returned.
  bool restart_seen = false;
  // None when no poll counted its connections before it stopped serving.
  std::optional<ConnectionsMoved> connections_moved;
};

class RestartTimeline {
 public:
  // `leader_before`: the leader as the check before the step saw it (the first polls can miss it).
  // `started`: when the step started, which stands for the last sight of `leader_before` leading
  // until a poll shows it.
  explicit RestartTimeline(std::optional<std::string> leader_before,
                           std::optional<Clock::time_point> started = std::nullopt);

  void polled(const PollSeen& seen);
  // The timeline so far; a downtime still running counts until `now`.
  [[nodiscard]] StepTimeline timeline(Clock::time_point now) const;
  [[nodiscard]] bool restart_seen() const { return timeline_.restart_seen; }

 private:
  void note_restart(const PollSeen& seen);
  void note_downtime(const PollSeen& seen);
  void note_leader(const PollSeen& seen);
  void note_connections(const PollSeen& seen);

  StepTimeline timeline_;
  std::optional<Clock::time_point> down_since_;
  std::optional<std::string> leading_;                       // the leader last seen
  std::optional<Clock::time_point> last_led_at_;             // when it was last seen leading
  std::optional<Clock::time_point> none_first_, none_last_;  // polls since then that showed no leader at all
  int polls_not_serving_ = 0;
  std::optional<std::int64_t> last_received_;
  // Connections: counted while it serves, followed once it stopped, no more once it serves again
  // (its clients may come back to it).
  enum class Moves { before, moving, ended } moves_ = Moves::before;
  std::optional<std::int64_t> target_connections_;
  std::map<std::string, std::int64_t> connections_before_;
  Clock::time_point moving_since_{};
};

}  // namespace zkverify
