#pragma once
// What the smoke suite's cases saw (probes/smoke_cases), as plain facts: every I/O step with its
// outcome, and each case's own findings (reads, ids, sequence names, timings). No verdicts here:
// verifier/judge/smoke_judge decides. Pure: no I/O header.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/facts/clock.hpp"
#include "model/facts/errors.hpp"
#include "model/facts/facts.hpp"
#include "model/facts/registrations.hpp"
#include "model/facts/session.hpp"

namespace zkverify {

// One I/O step of a case: "create", "sync", "close"... through a server (its listed name).
struct SmokeStep {
  std::string what;    // e.g. "create /zkverify/smoke-x/ephemeral"
  std::string server;  // the server the session was connected to (or pinned to); empty: none
  ZkError error = ZkError::not_attempted;
};

// What every case records.
struct CaseRun {
  bool ran = false;  // false: skipped (a stop was requested, or the run path could not be made)
  std::chrono::microseconds elapsed{0};
  std::vector<SmokeStep> steps;  // in order; a case stops at the first step that did not go as planned
};

struct ServerRead {
  std::string server;
  ZkError error = ZkError::not_attempted;  // sync, then get
  bool bytes_match = false;
};

struct RoundTripSeen {  // round-trip
  CaseRun run;
  std::string writer;
  std::vector<ServerRead> reads;
};

struct ServerLookup {
  std::string server;
  ZkError error = ZkError::not_attempted;  // of exists(): no_node = gone, ok = still there
};

struct EphemeralSeen {  // ephemeral-cleanup
  CaseRun run;
  std::string creator;
  std::string path;
  bool close_completed = false;
  std::vector<ServerLookup> after_close;  // one per server, after sync
};

struct WatchSeen {  // watch-fires
  CaseRun run;
  std::string watcher, writer;
  std::optional<WatchNotice> notice;               // none: it did not fire by the deadline
  std::optional<std::chrono::microseconds> delay;  // from the write's ack to the notice
  std::chrono::milliseconds waited{0};             // how long it was waited for
};

struct SequentialCreate {
  std::string server;
  ZkError error = ZkError::not_attempted;
  std::string path;  // with the sequence number the server appended
  Zxid czxid;
};

struct SequentialSeen {  // sequential-order
  CaseRun run;
  std::vector<SequentialCreate> creates;
};

struct MultiSeen {  // multi-atomic
  CaseRun run;
  std::string server;
  ZkError multi_error = ZkError::not_attempted;
  std::vector<ZkError> each;
  std::vector<ServerLookup> creates_left;  // per create of the multi, through the same session after it: server = path
};

struct CasSeen {  // cas-version
  CaseRun run;
  std::string server;
  std::int32_t version_before = -1;                  // after the create and one good set
  ZkError stale_set_error = ZkError::not_attempted;  // a set with the version the node had before
  std::string data_before, data_after;
  std::int32_t version_after = -1;
};

struct MoveSeen {  // session-move
  CaseRun run;
  std::string from, to;
  std::optional<std::int64_t> id_before, id_after;
  std::string connected_after;                           // the server the session is connected to after the move
  ZkError ephemeral_after = ZkError::not_attempted;      // get of its ephemeral through the moved session
  ZkError ephemeral_elsewhere = ZkError::not_attempted;  // exists through another session after sync
};

struct OpSamples {
  std::string op;                                  // create, set, get, delete
  std::vector<std::chrono::microseconds> samples;  // successful ones
  int errors = 0;
  ZkError first_error = ZkError::ok;
};

struct LatencySeen {  // latency/<server>
  CaseRun run;
  std::string server;
  std::vector<OpSamples> ops;
};

struct SmokeObservations {
  std::string run_path;
  std::vector<std::string> servers;  // the servers the cases went through, in list order
  SmokeStep prepare;                 // creating the namespace and the run path
  RoundTripSeen round_trip;
  EphemeralSeen ephemeral;
  WatchSeen watch;
  SequentialSeen sequential;
  MultiSeen multi;
  CasSeen cas;
  MoveSeen move;
  std::vector<LatencySeen> latency;      // one per server
  std::vector<ClientPathRead> clients;   // --clients: read through the janitor after the cases
  bool stopped = false;                  // a stop was requested: the cases after it did not run
  SmokeStep cleanup;                     // removing the run path
  std::vector<std::string> left_behind;  // what was still under the run path after cleanup
};

}  // namespace zkverify
