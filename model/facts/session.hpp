#pragma once
// What a ZooKeeper session reports, as plain data: its states and events, the results of its
// operations, and the operations a multi carries. The keeper seam (probes/keeper.hpp) speaks it;
// the watch's book and the judges read it.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "model/facts/errors.hpp"
#include "model/facts/facts.hpp"

namespace zkverify {

enum class SessionState { connecting, connected, expired, auth_failed, closed };

struct NodeStat {
  Zxid czxid;
  Zxid mzxid;
  std::int32_t version = 0;
  std::int64_t ephemeral_owner = 0;  // the session that holds an ephemeral node; 0 for a persistent one
  // When the node was created, by the wall clock of the server that created it: compare it with
  // another node's ctime (same servers' clocks), not with this machine's clock.
  std::chrono::sys_time<std::chrono::milliseconds> ctime{};
};

struct CreateResult {
  ZkError error = ZkError::not_attempted;
  std::string path;  // the created node's path (with the sequence number, for sequential nodes)
  NodeStat stat;
};
struct GetResult {
  ZkError error = ZkError::not_attempted;
  std::string data;
  NodeStat stat;
};
struct StatResult {  // set, exists
  ZkError error = ZkError::not_attempted;
  NodeStat stat;
};
struct ChildrenResult {
  ZkError error = ZkError::not_attempted;
  std::vector<std::string> children;
};
struct DoneResult {  // remove, sync
  ZkError error = ZkError::not_attempted;
};
// A node's ACL as far as zkverify looks at it: the schemes of its entries (sorted, unique), never
// their ids (a digest id is a password's hash).
struct AclResult {
  ZkError error = ZkError::not_attempted;
  std::vector<std::string> schemes;  // "world", "digest", "ip", "auth", ...
};
struct MultiResult {
  ZkError error = ZkError::not_attempted;  // ok only when every operation succeeded
  std::vector<ZkError> each;               // one per operation, in order
};

enum class CreateMode { persistent, ephemeral, persistent_sequential, ephemeral_sequential };

// One operation of a multi (all succeed or none is applied).
struct MultiOp {
  enum class Kind { create, remove, set, check } kind = Kind::create;
  std::string path;
  std::string data;                          // create, set
  CreateMode mode = CreateMode::persistent;  // create
  std::int32_t version = -1;                 // remove, set, check: -1 = any
};

// What a one-shot data watch saw (get_and_watch): the node changed, was deleted or created, its
// children changed, or the session was lost (expired, or closed) before anything happened.
enum class WatchKind { changed, deleted, created, children, session_lost };
struct WatchNotice {
  WatchKind kind = WatchKind::changed;
  std::string path;
};

// A change of the session's state, with the listed server it is connected to (its name from the
// server list; empty while not connected) and the session timeout the server granted.
struct SessionEvent {
  SessionState state = SessionState::connecting;
  std::string server;
  std::chrono::milliseconds granted_timeout{0};
};

}  // namespace zkverify
