#pragma once
// A fake ZooKeeper behind the keeper seam: one in-memory tree shared by every session, whatever
// server it names, and faults injected per server and per operation, so the round trip, the watch
// engine and step's logic meet connection loss, expiry, hung operations and hung closes without JVMs.
//
// Completions run on the fake's own dispatcher thread (as the C client's run on its completion
// thread), never inside the call that started the operation. The tree changes when an operation
// is started; the callback reports it later.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/keeper.hpp"

namespace zkverify::fake {

// watch: a get_and_watch's watch firing (never_complete: it never fires); move: Keeper::move_to
// (connection_loss: the session lands on its next server instead; session_expired: it dies);
// home: Keeper::return_home, counted whether it moves or not; can_go_home: Keeper::can_return_home
// asked (neither has faults).
enum class OpKind {
  connect,
  create,
  get,
  set,
  exists,
  children,
  remove,
  sync,
  multi,
  close,
  watch,
  move,
  get_acl,
  home,
  can_go_home
};

enum class Fault {
  never_complete,   // the operation (or connect, or close) never completes
  connection_loss,  // completes with connection_loss; the session disconnects, then reconnects (its next server)
  session_expired,  // completes with session_expired; the session is expired: its ephemerals are gone, it is dead
  other_bytes,      // completes ok, but a read returns bytes other than the node holds (a server gone wrong)
};

// Which operations a fault hits.
struct Rule {
  std::string server;  // the listed name of the server the session is connected to; empty: any
  OpKind op = OpKind::get;
  Fault fault = Fault::never_complete;
  int nth = 0;              // 0: every matching operation; n: only the n-th one (counted from inject)
  std::string path_prefix;  // empty: any path
};

class Ensemble {
 public:
  Ensemble();
  ~Ensemble();  // stops the dispatcher; callbacks still pending are dropped
  Ensemble(const Ensemble&) = delete;
  Ensemble& operator=(const Ensemble&) = delete;

  probes::KeeperFactory& factory();

  void inject(Rule rule);
  // Servers that refuse sessions: a session fails over to its next listed server, or never connects.
  void set_down(const std::string& server, bool down = true);
  // `server` refuses sessions moved to it (move_to): they connect to their next listed server.
  void refuse_moves_to(const std::string& server);
  // Every server on one address, as on a one-host ensemble: Keeper::return_home never moves a
  // session (the C client tells servers apart by address only).
  void share_one_address(bool shared = true);
  // Expires every session connected to `server` now (their listeners see `expired`).
  void expire_sessions_on(const std::string& server);
  // Completions queued together are delivered newest first (ZooKeeper never does this within one
  // session; the code must not depend on it across sessions).
  void reorder_completions(bool reorder = true);
  // Every completion waits this long on the dispatcher first.
  void delay_completions(std::chrono::milliseconds delay);
  // A close returns once its request is sent, as the C client's zookeeper_close does; the server
  // ends the session (its ephemerals go) `lag` later.
  void delay_close_effect(std::chrono::milliseconds lag);
  // The next `count` calls of open() block the thread that calls them until release_opens() (or 10 s,
  // so that a test that never releases them still ends): a caller stuck in a blocking call, as a
  // worker of the watch's checks can be. held_opens() tells how many are held now.
  void hold_opens(int count);
  void release_opens();
  // Until `count` opens are held, or the deadline; true when they were.
  bool wait_held_opens(int count, Clock::time_point deadline) const;
  // A session's id carries its server's id in the top byte, as ZooKeeper's do. Default ids: 1, 2, ...
  // in the order the fake first sees server names.
  void set_server_id(const std::string& server, int id);

  // ACLs, as far as digest authentication goes. A node created by a session with credentials is
  // creator-only (ZOO_CREATOR_ALL_ACL); others are open to all. `protect` gives `path` (created
  // empty and persistent if missing) a digest ACL for `owner` alone, plus read for anyone with
  // `world_readable`: a session without those credentials gets no_auth creating or removing
  // children, setting it, or (unless world-readable) reading it or its ACL. Digest itself, like
  // ZooKeeper's, accepts any credentials (the ACL decides) unless reject_unknown_credentials(): then
  // a session presenting credentials of no owner ends auth_failed, as a server refusing them does.
  void protect(const std::string& path, const Credentials& owner, bool world_readable = false);
  void reject_unknown_credentials(bool reject = true);
  // `server` refuses every session's SASL, as the relay reports it (Keeper::sasl_refusal): a session
  // connecting to it ends auth_failed, and its sasl_refusal() names `server` and `why` (the server's
  // answer, or with `by_server` false this host's failure).
  void refuse_sasl(const std::string& server, const std::string& why, bool by_server = true);
  // The ACL of `path` as "digest:USER" (creator-only) or "world:anyone" (open), plus
  // "world:anyone:read" for a world-readable one; empty when there is no such node.
  [[nodiscard]] std::vector<std::string> acl_of(const std::string& path) const;

  // What is in the tree now.
  [[nodiscard]] bool has_node(const std::string& path) const;
  [[nodiscard]] std::optional<std::string> data_of(const std::string& path) const;
  [[nodiscard]] std::vector<std::string> paths() const;  // every node but "/", sorted
  // Sessions opened so far / still open (not closed, not expired), and closes that completed.
  [[nodiscard]] int sessions_opened() const;
  [[nodiscard]] int sessions_open() const;
  [[nodiscard]] int closes_completed() const;
  // How many operations of a kind were started through a server (empty: any).
  [[nodiscard]] int operations(OpKind op, const std::string& server = "") const;
  // Until `count` such operations have started (as operations() counts them), or the deadline; true
  // when they had: a test waits for the code under test to reach a step, never sleeps for it.
  bool wait_for_operations(OpKind op, const std::string& server, int count, Clock::time_point deadline) const;

  struct State;  // shared with the sessions; defined in fake_keeper.cpp

 private:
  std::shared_ptr<State> state_;
};

}  // namespace zkverify::fake
