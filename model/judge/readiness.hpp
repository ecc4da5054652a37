#pragma once
// Is this pod's own server ready? Pure: the cycle's Report and the local sync proof in, the
// kube-apiserver-style checks and a yes/no out. A degraded ensemble whose local server serves and is
// synced is ready; without quorum nobody serves, so nobody is ready.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/judge/report.hpp"

namespace zkverify {

// How the local server proved it has caught up with the ensemble, strongest first.
enum class SyncProof {
  round_trip,  // the long-lived local session read the cycle's write (made through the leader) after sync
  peer_state,  // --no-write: the local server's mntr says zk_peer_state "following - broadcast" (or leading, observing)
  zabstate,    // --no-write, mntr refused: the local AdminServer's /commands/zabstate says "broadcast"
  synced_followers,  // --no-write, mntr refused: the leader's zk_synced_followers counts every follower
  srvr_mode,         // --no-write and nothing better: srvr's mode alone
};
// "round-trip read after sync", "mntr's zk_peer_state", "AdminServer's zabstate", "leader's zk_synced_followers",
// "srvr mode only".
std::string_view to_string(SyncProof proof);

struct ReadinessCheck {
  std::string name;  // "serving", "epoch", "synced"
  bool passed = false;
  std::string reason;  // why it failed; empty when it passed
};

struct Readiness {
  std::string local;  // the local server's name
  bool ready = false;
  SyncProof proof = SyncProof::srvr_mode;
  std::vector<ReadinessCheck> checks;  // serving, epoch, synced: in that order
};

// The local server's own word on its Zab phase, asked with --no-write: mntr's zk_peer_state
// ("following - broadcast"), or, where mntr is refused, the AdminServer's zabstate ("broadcast").
struct LocalPhase {
  SyncProof source = SyncProof::peer_state;  // peer_state or zabstate
  std::string value;
};

// The local server's readiness from the cycle's report; `wrote` says whether the cycle made a round
// trip (false with --no-write); `phase` is the local server's own word, when it was read.
// `local` must name one of report.servers.
Readiness judge_readiness(const Report& report, const std::string& local, bool wrote,
                          const std::optional<LocalPhase>& phase = std::nullopt);

// zk_peer_state's value from a mntr reply ("following - broadcast"), when the reply has one.
std::optional<std::string> parse_peer_state(std::string_view mntr_reply);
// The "zabstate" value of an AdminServer /commands/zabstate body ("broadcast"), when it has one.
std::optional<std::string> parse_zabstate(std::string_view admin_body);
// The sync proof an AdminServer /commands/zabstate body gives, when it names a phase: none for a
// server without the command (3.5.0 to 3.5.9 answer `Unknown command: zabstate`), so the sidecar
// falls back to the leader's synced followers, else srvr's mode.
std::optional<LocalPhase> zabstate_phase(std::string_view admin_body);

// The reason of the first failed check ("synced: ..."), or "" when ready.
std::string first_failure(const Readiness& readiness);

// The log lines between two cycles, one per change: readiness (with the reason), leader, verdict.
// `before_*` null: the first cycle, which says all three.
std::vector<std::string> describe_changes(const Report* before_report, const Readiness* before, const Report& report,
                                          const Readiness& after);

// /livez's rule: the last cycle ended (or the loop started) within 3 intervals + timeout.
bool is_alive(std::chrono::steady_clock::time_point last_cycle_end, std::chrono::steady_clock::time_point now,
              std::chrono::milliseconds interval, std::chrono::milliseconds timeout);

}  // namespace zkverify
