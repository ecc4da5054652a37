#pragma once
// The ledger: what earlier runs saw (zxid high-water marks, node count, membership, leader, the
// durability marker, the restart round), so a run can tell that the ensemble went backwards.
// Everything here is pure: state_file does the I/O.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/facts/facts.hpp"
#include "model/facts/failure.hpp"
#include "model/facts/registrations.hpp"

namespace zkverify {

struct LedgerServer {
  std::optional<int> id;
  Zxid high_zxid;
  std::optional<std::int64_t> node_count;
  std::string mode;
  std::string last_seen;  // ISO 8601, UTC
};

struct Marker {
  std::string path;
  Zxid czxid;
  std::string content;
};

struct DataLoss {
  std::string detected;  // when
  std::string message;   // what was seen
};

// A restart approved (by safe-to-restart or step) whose server has not yet been seen back: until
// then it counts as going down for other approvals (restart_plan.hpp).
struct Approval {
  std::string approved;                  // ISO 8601, UTC
  bool seen_down = false;                // a check since then saw the server not serving
  std::optional<std::int64_t> received;  // its srvr "Received" then: lower later means it restarted
};

// The last election a step saw (the leader moved): how long the ensemble went without one. Before
// the leader's next step, clients whose session timeout is no longer are named (server_side.hpp).
struct Election {
  long long leaderless_ms = 0;
  std::string during;  // the server that step restarted
  std::string at;      // ISO 8601, UTC: when the step ended
};

struct Ledger {
  Zxid high_zxid;                          // the ensemble's high-water mark; never lowered
  std::optional<std::int64_t> node_count;  // the leader's, at the last run that had one
  std::optional<std::string> leader;
  std::vector<std::string> membership;  // "server.N=..." lines as the servers report them
  std::optional<Marker> marker;
  std::optional<DataLoss> data_loss;  // sticky until --reset-state
  std::map<std::string, LedgerServer> servers;
  std::set<std::string> restarted;  // this restart round: servers approved (safe-to-restart) or restarted (step)
  std::map<std::string, Approval> in_flight;  // approved, not yet seen back
  // --clients: each path as the last run that read it saw it (its registrations and their sessions).
  std::vector<ClientPathRead> clients;
  std::optional<Election> last_election;
  std::string updated;
};

inline constexpr std::string_view kLedgerFormat = "zkverify-ledger/1";

nlohmann::json to_json(const Ledger& ledger);
// Throws BadInput naming the field that is missing or wrong.
Ledger ledger_from_json(const nlohmann::json& json);

// The marker znode's path under a namespace, and the content a new one gets.
std::string marker_path(const std::string& namespace_path);

// A one-line summary of what --reset-state forgets.
std::string describe_forgotten(const Ledger& ledger);

}  // namespace zkverify
