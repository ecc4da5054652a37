#pragma once
// One restart step, judged: what step and roll report of it (its own findings), and the one rule
// both use for whether it went well.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/books/registration_log.hpp"
#include "model/books/restart_timeline.hpp"
#include "model/judge/ledger.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// What a step did, as the judge needs it.
struct StepFacts {
  std::string server;                    // the server COMMAND restarts
  std::string command;                   // COMMAND, as one line
  std::chrono::milliseconds timeout{0};  // the step's bound
  int stable = 3;                        // healthy checks in a row that end the wait
  int command_status = 0;
  std::string spawn_error;   // why COMMAND never ran
  bool timed_out = false;    // COMMAND ran past the bound
  bool interrupted = false;  // a stop signal ended the step
  bool restart_seen = false;
  int healthy_streak = 0;
  Verdict last_verdict = Verdict::healthy;  // the last check's
  std::string version_before;               // the server's release in the check before COMMAND; "" unknown
  std::string
      state_after;  // how the last check found the server when it did not serve: "unreachable: connection refused"
  // --clients: the registrations the check before COMMAND read, and the last check; none when unread.
  std::optional<std::vector<ClientPathRead>> clients_before, clients_after;
  // --clients: what the watch's live follower saw of the registrations during the step (absences that
  // began or ended in it).
  std::vector<RegistrationAbsence> clients_seen;
  std::optional<ConsFacts> cons_before;               // the restarted server's cons before COMMAND (clients-on-server)
  std::map<int, std::string> servers_by_id;           // the last check's ids, for the clients' findings
  std::optional<std::chrono::milliseconds> downtime;  // how long the restarted server did not serve
  std::chrono::milliseconds longest_leaderless{0};
  std::optional<ConnectionsMoved> connections_moved;  // where its client connections went (polled srvr)
  std::string ephemerals_on;                          // the server whose mntr counted the ephemerals
  std::optional<std::int64_t> ephemerals_before, ephemerals_after;
  // The leader's step only: every server's cons before COMMAND, and the ledger's last election.
  std::vector<ConsFacts> cons_everywhere;
  std::optional<Election> last_election;
};

// command-timed-out or command-failed; interrupted, not-restarted or not-recovered; what became of
// the clients' registrations (client_changes.hpp), "during the step on SERVER"; and, as info, where
// its client connections went and whether the ephemerals fell (server_side.hpp).
std::vector<Finding> step_findings(const StepFacts& step);

// The step's verdict: the last check's, made worse by the step's own findings and the watch's. A
// step went well (step exits 0, roll goes on) only when it is healthy.
Verdict step_verdict(const Report& last_check, const std::vector<Finding>& step_findings,
                     const std::vector<Finding>& watch_findings);

}  // namespace zkverify
