#pragma once
// What verifier/ concludes: findings, a verdict, and one row per server. Renderers print a Report.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/facts.hpp"
#include "model/judge/findings.hpp"

namespace zkverify {

enum class Verdict { healthy, degraded, critical };

// A server as a report shows it: the mode srvr reported, or why there is none.
enum class ServerState {
  leader,
  follower,
  observer,
  standalone,
  read_only,
  unknown,
  not_serving,
  unreachable,
  bad_reply
};

// The names reports print: "leader", ..., "read-only", "not-serving", "unreachable", "bad-reply".
std::string_view to_string(ServerState state);
ServerState state_of(Mode mode);
// The mode behind a state; none for not_serving, unreachable and bad_reply.
std::optional<Mode> mode_of(ServerState state);
bool is_serving(ServerState state);        // is_serving of its mode
bool is_serving_voter(ServerState state);  // is_serving_voter of its mode

struct Finding {
  Severity severity = Severity::info;
  FindingCode code = FindingCode::unreachable;  // printed by its stable name (findings.hpp)
  std::string server;                           // the server it is about; empty when about the ensemble
  std::string message;                          // one sentence for a human
};

// A finding at its code's usual severity.
Finding make_finding(FindingCode code, std::string server, std::string message);
// Whether `findings` has one with `code`.
bool has_finding(const std::vector<Finding>& findings, FindingCode code);

struct ServerRow {
  std::string name;
  std::string address;
  std::optional<int> id;
  ServerState state = ServerState::unreachable;
  std::optional<Zxid> zxid;                      // highest seen: srvr's, or the round-trip write this server read back
  std::optional<double> latency_ms;              // of the srvr exchange
  std::optional<std::int64_t> node_count;        // srvr's "Node count"
  std::string version;                           // srvr's release ("3.8.0"); empty when it did not say
  std::optional<std::int64_t> packets_received;  // srvr's "Received" (not rendered: tells a restart)
  std::optional<std::int64_t> connections;       // srvr's "Connections": its clients, zkverify's srvr included
  std::optional<std::int64_t> ephemerals;        // mntr's (or the AdminServer's) count of the tree's ephemerals
  std::optional<bool> read_back;                 // the round trip's write was read back here (unset: not attempted)
  // Proven in sync with the leader: it leads, it read the round trip's write back, or the leader's
  // zk_synced_followers counts every follower. Unset: not proven either way.
  std::optional<bool> synced;
  std::string error;  // empty when the server answered srvr
  std::string note;
  std::optional<CertificateFacts> certificate;  // over TLS: the server's, also when the handshake failed
  long long certificate_days_left = 0;          // to its not-after, from when it was judged
};

struct RoundTripSummary {
  std::string writer;
  std::string path;
  std::optional<Zxid> write_zxid;
  int reads_ok = 0;
  int reads_attempted = 0;
  bool refused = false;  // the servers refused the sessions, or the namespace (the findings say which)
};

// With TLS on: zkverify's own client certificate.
struct ClientTls {
  std::optional<CertificateFacts> certificate;  // none: it presents none
  long long days_left = 0;
};

// One membership list that listed servers hold (views.hpp), as the report gives it.
struct ViewSummary {
  std::optional<std::int64_t> version;  // the dynamic config's version=, when reported
  std::vector<int> voters, observers;   // ids
  std::vector<std::string> holders;     // the listed servers that hold it
  std::vector<std::string> given;       // those whose list --zoo-cfg gave (they report none)
};

struct Report {
  Verdict verdict = Verdict::healthy;
  std::optional<std::string> leader;  // set only when exactly one server leads
  int expected_voters = 0;
  int serving_voters = 0;
  bool membership_reported = false;           // some server reported the membership (conf or the AdminServer)
  bool voters_uncertain = false;              // expected_voters is an estimate that a committed write disproved
  std::vector<ViewSummary> membership_views;  // one per list held; two or more while a membership changes
  std::vector<ServerRow> servers;
  std::vector<Finding> findings;
  std::optional<RoundTripSummary> round_trip;  // empty when skipped (--no-write) or impossible
  std::optional<PhaseTimings> timings;         // where the check's time went, when it was measured
  std::optional<Timeline> timeline;            // its steps, when they were timed (--trace)
  std::optional<ClientTls> tls;                // none: plain TCP
  // --clients: the registrations as the writer's session read them; none when not asked or not read.
  std::optional<std::vector<ClientPathRead>> clients;
};

std::string_view to_string(Verdict verdict);

// Each server's id to its name, for the servers that said their id.
std::map<int, std::string> servers_by_id(const std::vector<ServerRow>& servers);

// `server`'s release in `report` ("3.8.0"); "" when it is not listed or did not say.
std::string version_of(const Report& report, const std::string& server);

}  // namespace zkverify
