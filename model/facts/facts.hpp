#pragma once
// Plain facts about servers, as probes found them. No verdicts here: verifier/ decides.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/addresses.hpp"
#include "model/facts/clock.hpp"
#include "model/facts/credentials.hpp"
#include "model/facts/errors.hpp"
#include "model/facts/registrations.hpp"
#include "model/facts/tls_facts.hpp"

namespace zkverify {

// A ZooKeeper transaction id: the leader's epoch in the high 32 bits, a counter in the low 32.
struct Zxid {
  std::uint64_t value = 0;
  [[nodiscard]] std::uint32_t epoch() const { return static_cast<std::uint32_t>(value >> 32); }
  [[nodiscard]] std::uint32_t counter() const { return static_cast<std::uint32_t>(value & 0xffffffffu); }
  auto operator<=>(const Zxid&) const = default;
};

// "0x100000003", as zkCli and the server logs print zxids.
std::string zxid_hex(Zxid zxid);

// The release of srvr's version line: "3.8.0" of "3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on ...".
std::string release_of(std::string_view srvr_version);

enum class Mode { unknown, leader, follower, observer, standalone, read_only };

// Serving clients with the ensemble's data: a leader, a follower or an observer.
bool is_serving(Mode mode);
// Serving, and counting towards the quorum: a leader or a follower (observers do not vote).
bool is_serving_voter(Mode mode);

template <class Facts>
struct Reply {                               // how a server answered one request, and the facts in it
  ProbeError error = ProbeError::malformed;  // ok: the facts are valid; else not_serving, not_whitelisted, malformed
  Facts facts{};
  std::string detail;  // for malformed: what was wrong; otherwise empty
  [[nodiscard]] bool ok() const { return error == ProbeError::ok; }
};

// The reply was received and parsed: its facts are valid.
template <class Facts>
bool has_facts(const std::optional<Reply<Facts>>& reply) {
  return reply && reply->ok();
}

struct SrvrFacts {      // srvr / stat
  std::string version;  // as srvr says it: "3.8.0-5a02a05e..., built on ..."
  Zxid zxid;
  Mode mode = Mode::unknown;
  std::int64_t node_count = 0;
  std::int64_t connections = 0;
  std::int64_t outstanding = 0;
  // "Received": packets since the server started (or since `srst`, which zkverify never sends): it
  // only goes down when the server restarted.
  std::optional<std::int64_t> received;
};

struct MntrFacts {           // mntr, or the AdminServer's "monitor"
  std::string server_state;  // leader, follower, observer, standalone, read-only
  std::optional<std::int64_t> znode_count;
  std::optional<std::int64_t> synced_followers;  // leader only: followers synced with it, voting or not
  std::optional<std::int64_t> learners;          // leader only
  std::optional<std::int64_t> quorum_size;
  // Leader only (3.6+): the synced followers its list gives no vote (started on a longer list).
  std::optional<std::int64_t> synced_non_voting_followers;
  // Every server's count of the whole tree's ephemeral nodes: it falls when sessions that held some end.
  std::optional<std::int64_t> ephemerals;
  std::optional<std::int64_t> alive_connections;  // client connections, this one included
};

struct Member {  // one server.N line of the dynamic configuration
  int id = 0;
  std::string quorum_address;    // host:port the voters talk on
  std::string election_address;  // host:port of leader election
  std::string role;              // "participant" or "observer"
  std::string client_address;    // host:port, empty when the config line has none
  auto operator<=>(const Member&) const = default;
};

// What every server knows of a member, whatever its own config says: a server's view of the
// others' client addresses depends on how server.N lines were written (kubernetes-kafka writes
// none), so membership is compared without them.
struct MemberIdentity {
  int id = 0;
  std::string quorum_address, election_address, role;
  auto operator<=>(const MemberIdentity&) const = default;
};
MemberIdentity identity_of(const Member& member);

struct ConfFacts {  // conf, or the AdminServer's "configuration" + "voting_view"
  std::optional<int> server_id;
  std::vector<Member> members;  // sorted by id; empty when not reported
  bool voters_only = false;     // the members came from voting_view, which lists no observers
  std::optional<std::int64_t> config_version;
};

struct IsroFacts {
  bool read_only = false;
};

struct RuokFacts {
  bool imok = false;
};

// One word's exchange over TCP: the transport outcome and, when it succeeded, the raw reply.
struct Exchange {
  ProbeError error = ProbeError::ok;  // a transport error, or ok
  std::string detail;                 // the socket error text, when any
  std::string reply;                  // what the server sent (possibly partial when error != none)
  std::chrono::microseconds latency{0};
  TlsFailure tls_failure = TlsFailure::none;    // with error tls_failed: why (detail has it in words)
  std::optional<CertificateFacts> certificate;  // over TLS: the server's, as its handshake presented it
  bool tls_resumed = false;  // over TLS: the handshake resumed a session of an earlier one with the server
  // The IP address the connection reached ("127.77.0.4"), once it connected: two names that reach two
  // addresses on one port are two processes, even where each says it is the same server id.
  std::string peer;
  // When it began, connected, ended its TLS handshake and ended (--trace); zero where not reached.
  Clock::time_point started{}, connected{}, secured{}, ended{};
};

// One step of a check, timed (--trace): the server it was with (empty: none), what, and when.
struct TimedStep {
  std::string server;
  std::string what;
  Clock::time_point begin{}, end{};
};

// A check's steps in the order they began, timed from `origin`, when the check began (--trace).
struct Timeline {
  Clock::time_point origin{};
  std::vector<TimedStep> steps;
};

// An exchange's steps: its connection, its TLS handshake and the request's answer, named after
// `what` ("srvr"); none for one that never started.
std::vector<TimedStep> steps_of(const std::string& server, const std::string& what, const Exchange& exchange);

// The words tried after srvr, in order; refused ones are recorded, not retried.
inline const std::vector<std::string> kOptionalWords{"mntr", "conf", "isro", "ruok"};

// Human-readable text of a transport error ("connection refused", "no reply within the deadline", ...).
std::string describe(const Exchange& exchange);

// Everything the four-letter words and the AdminServer told about one server.
struct ServerProbe {
  ServerAddress address;
  Exchange srvr_exchange;                // srvr is always tried first: it is enabled everywhere
  std::optional<Reply<SrvrFacts>> srvr;  // parsed srvr, when the exchange completed
  std::optional<Reply<MntrFacts>> mntr;
  std::optional<Reply<ConfFacts>> conf;
  std::optional<Reply<IsroFacts>> isro;
  std::optional<Reply<RuokFacts>> ruok;
  std::string admin_error;                 // why the AdminServer could not be used, when an admin port was given
  std::vector<std::string> refused_words;  // words the server refused as not whitelisted
  std::vector<TimedStep> steps;            // each exchange's steps, as they ended (--trace)
};

// The mode srvr reported, when it answered with facts.
std::optional<Mode> mode_of(const ServerProbe& probe);

// The round trip through the ZooKeeper client protocol.
struct ReadBack {
  std::string server;  // name of the server the session was pinned to
  ZkError error = ZkError::not_attempted;
  std::optional<int> session_server_id;  // top byte of the session id: the id of the server that made it
  bool bytes_match = false;
  std::optional<Zxid> read_mzxid;        // the node's mzxid as this server returned it
  std::chrono::microseconds latency{0};  // sync + read
  // The durability marker, read after the same sync (when the plan names one).
  ZkError marker_error = ZkError::not_attempted;
  std::optional<Zxid> marker_czxid;
  std::string marker_data;
};

// Where a check's wall-clock time went, by phase (zero for a phase that did not run). The phases
// can overlap (sessions connect while the words are in flight), so they need not add up to `total`.
struct PhaseTimings {
  std::chrono::microseconds probe{0};      // the four-letter words and the AdminServer
  std::chrono::microseconds connect{0};    // waiting for the writer's session, once the round trip started
  std::chrono::microseconds write{0};      // the namespace, the marker and the probe node created
  std::chrono::microseconds read_back{0};  // every session's sync and reads
  std::chrono::microseconds cleanup{0};    // the probe node deleted, the sessions closed
  std::chrono::microseconds total{0};      // the whole command, to its report
};

struct RoundTrip {
  std::string writer;  // the server the write went through
  std::string path;    // the znode created (ephemeral sequential)
  // Creating the namespace node (node_exists is fine): ok once a node was created in it (or found
  // there); not_attempted when the write failed before telling whether it exists (the write's error
  // says why).
  ZkError namespace_error = ZkError::not_attempted;
  ZkError write_error = ZkError::not_attempted;
  std::optional<Zxid> write_zxid;  // czxid of the created node
  std::vector<ReadBack> reads;     // one per server it was attempted on
  // The probe node's removal, which the writer's session close does (the node is ephemeral): ok
  // once that close completed; deadline_exceeded when it was abandoned and the node waits for the
  // server to expire the session. A writer whose close does not end its session (the sidecar's
  // lent one) deletes the node instead: this is that delete's error.
  ZkError removal_error = ZkError::not_attempted;
  std::string marker_path;                               // empty when no marker was asked for
  ZkError marker_create_error = ZkError::not_attempted;  // node_exists when it was already there
  // Access under ACLs (a session refused by the server's authentication shows as auth_failed in
  // write_error or a read's error instead).
  std::string namespace_path;                  // the namespace the round trip writes under
  bool credentials_given = false;              // the sessions presented credentials (--auth-file)
  std::vector<SaslRefusal> sasl_refusals;      // the servers that refused the sessions' SASL, and why
  std::string denied_path;                     // the node whose ACL first answered no_auth; empty: none did
  ZkError acl_error = ZkError::not_attempted;  // reading denied_path's ACL (no_auth: not readable either)
  std::vector<std::string> acl_schemes;        // its ACL's schemes, sorted, when it could be read
  PhaseTimings timings;                        // connect, write, read_back, cleanup
  std::vector<TimedStep> steps;                // the writer's session, the write, each sync and read, the close
  std::vector<ClientPathRead> clients;         // --clients: each path as the writer's session read it
};

}  // namespace zkverify
