#pragma once
// A ZooKeeper client session (C client, multi-threaded flavour) with deadlines on every wait.
// The C client's synchronous calls can block forever, so only its async calls are used here; each
// completion fills a shared state that outlives the caller, so a late completion is harmless.

#include "probes/io.hpp"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "probes/facts.hpp"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own spelling

namespace zkverify::probes {

using Clock = std::chrono::steady_clock;

struct NodeRead {
  std::string data;
  Zxid czxid;
  Zxid mzxid;
  std::int32_t version = 0;
};

class ZkSession {
 public:
  class PendingOp;

  // Called from the C client's thread on every session state change (ZOO_CONNECTED_STATE, ...),
  // with the server the session is connected or connecting to ("127.0.0.1:2181") and the session
  // timeout the server granted.
  using StateListener =
      std::function<void(int state, const std::string& server, std::chrono::milliseconds granted_timeout)>;

  // Starts connecting to `connect_string` ("host:port" pins the session to that one server; several
  // are tried in the order given) and returns at once; wait_connected() waits for the outcome.
  ZkSession(const std::string& connect_string, std::chrono::milliseconds session_timeout,
            StateListener listener = nullptr);
  ~ZkSession();  // closes the session (the server drops its ephemeral nodes)
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // ok once connected; session_expired, auth_failed, or deadline_exceeded otherwise.
  ZkError wait_connected(Clock::time_point deadline);
  // The session id once connected; its top byte is the id of the server that created it.
  [[nodiscard]] std::optional<std::int64_t> session_id() const;

  ZkError create(const std::string& path, const std::string& data, int flags, Clock::time_point deadline,
                 std::string* created_path = nullptr, Zxid* czxid = nullptr);
  ZkError remove(const std::string& path, Clock::time_point deadline);
  ZkError exists(const std::string& path, Clock::time_point deadline);
  // Deletes every path, pipelined; returns the first error other than no_node.
  ZkError remove_all(const std::vector<std::string>& paths, Clock::time_point deadline);
  // sync, then the children of `path`.
  ZkError sync_and_children(const std::string& path, Clock::time_point deadline, std::vector<std::string>& children);

  // Fire-and-forget setData (any version); `done` runs on the C client's thread with the outcome and
  // the node's new version.
  using SetDone = std::function<void(ZkError, std::int32_t version)>;
  void set_async(const std::string& path, const std::string& data, SetDone done);

  // The session timeout the server granted (0 until connected).
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const;

  // Queues a sync (so this server has caught up with the leader) and then a read of each path;
  // returns without waiting, so reads through several sessions run concurrently. await_read()
  // collects each, in the order of `paths`.
  std::vector<std::shared_ptr<PendingOp>> start_sync_and_read(const std::string& sync_path,
                                                              const std::vector<std::string>& paths);
  ZkError await_read(const std::shared_ptr<PendingOp>& op, Clock::time_point deadline, NodeRead& read);

 private:
  static void on_session_event(zhandle_t* zh, int type, int state, const char* path, void* context);
  StateListener listener_;
  zhandle_t* handle_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int state_ = 0;
};

}  // namespace zkverify::probes
