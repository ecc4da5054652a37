#pragma once
// The keeper seam: everything zkverify does with a ZooKeeper session, as one interface (the shape of
// ClickHouse's IKeeper). The C client implements it (c_keeper); tests implement a fake that can
// lose the connection mid-operation, expire the session, never complete an operation or a close,
// and complete operations out of order. The round trip and the watch engine only see this header.
//
// Every operation is asynchronous: it returns at once and its callback runs exactly once, never
// inside the call that started it (the C client's run on the executor, each session's on a strand
// of its own, in order), with the outcome (ZkError::closing when the session was closed first).
// Every operation is pure virtual, so a forwarding keeper cannot silently drop one. `Expect<R>` turns a callback into a
// result awaited with a deadline; a completion after the deadline is harmless.

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/facts/addresses.hpp"
#include "model/facts/clock.hpp"
#include "model/facts/credentials.hpp"
#include "model/facts/errors.hpp"
#include "model/facts/facts.hpp"
#include "model/facts/session.hpp"

namespace zkverify::probes {

class Keeper {
 public:
  template <class R>
  using Callback = std::function<void(R)>;
  using Listener = std::function<void(const SessionEvent&)>;

  // Closes the session if close() did not: may wait as long as the implementation's own close does.
  virtual ~Keeper() = default;

  // ok once connected; session_expired, auth_failed, or deadline_exceeded otherwise.
  virtual ZkError wait_connected(Clock::time_point deadline) = 0;
  [[nodiscard]] virtual SessionState state() const = 0;
  // Once connected: the session id; its top byte is the id of the server that created it.
  [[nodiscard]] virtual std::optional<std::int64_t> session_id() const = 0;
  // The listed name of the server the session is connected to; empty while not connected.
  [[nodiscard]] virtual std::string connected_server() const = 0;
  // The session timeout the server granted (0 until connected).
  [[nodiscard]] virtual std::chrono::milliseconds negotiated_timeout() const = 0;

  virtual void create(const std::string& path, const std::string& data, CreateMode mode,
                      Callback<CreateResult> done) = 0;
  virtual void get(const std::string& path, Callback<GetResult> done) = 0;
  virtual void set(const std::string& path, const std::string& data, std::int32_t version,
                   Callback<StatResult> done) = 0;
  virtual void exists(const std::string& path, Callback<StatResult> done) = 0;
  virtual void children(const std::string& path, Callback<ChildrenResult> done) = 0;
  virtual void remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) = 0;
  // Brings the connected server up to date with the leader; requests queued after it on this
  // session are answered after it (ZooKeeper answers one session's requests in order).
  virtual void sync(const std::string& path, Callback<DoneResult> done) = 0;
  virtual void multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) = 0;

  // As get(), and leaves a one-shot data watch on `path` when the read succeeds: `fired` runs at most
  // once, on the implementation's thread, when the node changes or goes. It must own what it touches
  // (it may run after the caller stopped waiting) and must not block.
  virtual void get_and_watch(const std::string& path, Callback<GetResult> done,
                             std::function<void(WatchNotice)> fired) = 0;
  // As children(), and leaves a one-shot child watch on `path` when the read succeeds: `fired` as
  // get_and_watch's, when a child is created or deleted (or the node goes).
  virtual void children_and_watch(const std::string& path, Callback<ChildrenResult> done,
                                  std::function<void(WatchNotice)> fired) = 0;
  // Moves the session to the listed server `server` (one of those it was opened with): the
  // connection drops and the session resumes there with the same id and ephemerals. ok when the
  // move started (wait_connected_to says when it arrived); bad_arguments for a server it does not
  // know.
  virtual ZkError move_to(const std::string& server) = 0;
  // Until the moved session is connected again, or ended, or the deadline; true when it is
  // connected to the listed server `server`. A session that resumed elsewhere stays there, so
  // waiting longer for `server` would only spend the caller's deadline.
  virtual bool wait_connected_to(const std::string& server, Clock::time_point deadline) const = 0;

  // From now on the session may fail over to every server it was opened with, not only the first
  // KeeperOptions::first_choices of them, except to the `crowded` ones beyond those unless all are
  // (nothing to do for a session that tries them all).
  virtual void widen(const std::vector<std::string>& crowded) = 0;

  // Moves a session that failed over back to the first server it was opened with (its own; the
  // caller has seen it serve), keeping its id; until widen() it then fails over nowhere else.
  // false when it does not move: not connected, already there, or the server it is on has that
  // server's address (the C client moves a session only to another address: one-host ensembles).
  virtual bool return_home() = 0;
  // Whether return_home() could move the session from where it is now (connected elsewhere, to
  // another address): asked before the caller spends a connection on seeing that server serve.
  [[nodiscard]] virtual bool can_return_home() const = 0;

  // The schemes of `path`'s ACL (the server answers no_auth unless the session may read or administer
  // the node).
  virtual void get_acl(const std::string& path, Callback<AclResult> done) = 0;
  // The session presents credentials (KeeperOptions::credentials, or sasl): what it creates is
  // creator-only.
  [[nodiscard]] virtual bool presents_credentials() const = 0;
  // Why a server refused this session's SASL (the relay's exchange: probes/relay.hpp), if one did;
  // such a session then never connects, and wait_connected says auth_failed.
  [[nodiscard]] virtual std::optional<SaslRefusal> sasl_refusal() const = 0;

  // Closes the session (a quorum transaction: the server then removes its ephemeral nodes). Returns
  // true when that completed by the deadline; false when it was abandoned (the server expires the
  // session later). Waits no longer than the deadline, so a deadline already passed only starts the
  // close. Idempotent: a later call waits for the same close. Later operations complete with
  // ZkError::closing.
  virtual bool close(Clock::time_point deadline) = 0;
  // Whether close() ends the session, and with it the session's ephemeral nodes: not for a session
  // lent by a longer-lived owner (the sidecar's session on its own server).
  [[nodiscard]] virtual bool close_ends_session() const = 0;
};

struct KeeperOptions {
  std::chrono::milliseconds session_timeout{10000};
  // Try `servers` in the order given (each session prefers its own server, like a real client with
  // its own connect string); otherwise the implementation's default (random) order.
  bool in_order = false;
  // With in_order: fail over only among the first N of `servers` until widen() (0: among all). The
  // watch opens each session with its own server and one other, so that sessions displaced by an
  // election cannot pile up on whichever server serves first (maxClientCnxns counts per client IP).
  std::size_t first_choices = 0;
  // Added to the session before its first operation (zoo_add_auth); what the session creates then
  // carries the creator-only ACL. None: no credentials, and nodes are created open to all.
  std::optional<Credentials> credentials;
  // The session authenticates by SASL (its relay's exchange: probes/relay.hpp), so what it creates
  // carries the creator-only ACL too: the server gives it the SASL identity (sasl:USER).
  bool sasl = false;
};

// Opens sessions. A session given one server is pinned to it; given several, it fails over.
class KeeperFactory {
 public:
  virtual ~KeeperFactory() = default;
  // Starts connecting and returns at once; Keeper::wait_connected waits for the outcome. `listener`
  // runs on the implementation's thread for every state change: it must not block.
  virtual std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                                       Keeper::Listener listener = nullptr) = 0;
};

// Another factory's sessions, each given `credentials` unless the caller's options carry some.
class CredentialedFactory final : public KeeperFactory {
 public:
  CredentialedFactory(KeeperFactory& inner, std::optional<Credentials> credentials)
      : inner_(inner), credentials_(std::move(credentials)) {}
  std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                               Keeper::Listener listener = nullptr) override;

 private:
  KeeperFactory& inner_;
  std::optional<Credentials> credentials_;
};

// A callback and the result it delivers, awaited with a deadline.
template <class R>
class Expect {
 public:
  Keeper::Callback<R> callback() {
    return [promise = promise_](R result) { promise->set_value(std::move(result)); };
  }
  // The result, or one whose error is deadline_exceeded when the deadline passed first.
  R await(Clock::time_point deadline) {
    if (future_.wait_until(deadline) != std::future_status::ready) {
      R late{};
      late.error = ZkError::deadline_exceeded;
      return late;
    }
    return future_.get();
  }

 private:
  std::shared_ptr<std::promise<R>> promise_ = std::make_shared<std::promise<R>>();
  std::future<R> future_ = promise_->get_future();
};

// The common blocking forms, each bounded by `deadline`.
CreateResult create_now(Keeper& keeper, const std::string& path, const std::string& data, CreateMode mode,
                        Clock::time_point deadline);
GetResult get_now(Keeper& keeper, const std::string& path, Clock::time_point deadline);
StatResult exists_now(Keeper& keeper, const std::string& path, Clock::time_point deadline);
ZkError remove_now(Keeper& keeper, const std::string& path, Clock::time_point deadline);
// Deletes every path, pipelined; returns the first error other than no_node.
ZkError remove_all_now(Keeper& keeper, const std::vector<std::string>& paths, Clock::time_point deadline);

// get_acl, awaited.
AclResult get_acl_now(Keeper& keeper, const std::string& path, Clock::time_point deadline);

// get_and_watch, awaited: the read's result; `fired` as get_and_watch's.
GetResult get_and_watch_now(Keeper& keeper, const std::string& path, std::function<void(WatchNotice)> fired,
                            Clock::time_point deadline);

// children_and_watch, awaited: the read's result; `fired` as children_and_watch's.
ChildrenResult children_and_watch_now(Keeper& keeper, const std::string& path, std::function<void(WatchNotice)> fired,
                                      Clock::time_point deadline);

// Closes every session at once and waits for them together until `deadline`; sessions still closing
// then are abandoned (their servers expire them). Returns how many closed in time.
std::size_t close_all(std::vector<std::unique_ptr<Keeper>>& sessions, Clock::time_point deadline);
std::size_t close_all(const std::vector<std::shared_ptr<Keeper>>& sessions, Clock::time_point deadline);

// The id of the server that created a session: the top byte of its id.
std::optional<int> creator_id(const Keeper& keeper);

}  // namespace zkverify::probes
