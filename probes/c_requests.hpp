#pragma once
// Requests in the C client's hands: each holds the caller's callback and delivers it exactly once,
// posted to the session's strand (never on the client's thread, never inside the call that started
// the operation), and the completion functions the client calls with each reply.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <zookeeper/zookeeper.h>
#include <boost/asio/post.hpp>

#include "probes/c_session.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes::c_client {

template <class R>
class Request {
 public:
  using Result = R;
  Request(SessionCore::Strand strand, Keeper::Callback<R> done) : strand_(std::move(strand)), done_(std::move(done)) {}
  void deliver(R result) {
    if (delivered_.test_and_set()) return;
    boost::asio::post(strand_,
                      [done = std::move(done_), result = std::move(result)]() mutable { done(std::move(result)); });
  }

 private:
  SessionCore::Strand strand_;
  Keeper::Callback<R> done_;
  std::atomic_flag delivered_;
};

// A multi's per-operation answers are written by the client into `answers` when the reply comes,
// so they live as long as the request.
class MultiRequest : public Request<MultiResult> {
 public:
  // Marks an answer the client never wrote (the whole multi failed, e.g. on connection loss).
  static constexpr int kUnanswered = static_cast<int>(ZkError::not_attempted);

  MultiRequest(SessionCore::Strand strand, Keeper::Callback<MultiResult> done, std::size_t count)
      : Request(std::move(strand), std::move(done)),
        answers(count, zoo_op_result_t{kUnanswered, nullptr, 0, nullptr}) {}
  std::vector<zoo_op_result_t> answers;
};

// The client takes a `const void*` per request and hands it to exactly one completion: it holds
// one reference to the request until then.
template <class Req>
const void* hand_to_client(const std::shared_ptr<Req>& request) {
  return new std::shared_ptr<Req>(request);
}
template <class Req>
std::shared_ptr<Req> take_back(const void* context) {
  std::unique_ptr<std::shared_ptr<Req>> holder(static_cast<std::shared_ptr<Req>*>(const_cast<void*>(context)));
  return std::move(*holder);
}

// A result whose error is the client's return code (ZOK included).
template <class R>
R with_error(int rc) {
  R result;
  result.error = zk_error_from_code(rc);
  return result;
}

// The session's handle, shared by the CKeeper and the work it hands to the executor: any of them
// may be the last to let go.
struct HandleSlot {
  // Guards the rest. No call uses the handle once close() took it (zookeeper_close frees it).
  std::mutex mutex;
  zhandle_t* handle = nullptr;  // null until opened, and once close() took it
  bool close_started = false;
  std::vector<zhandle_t*> retired;  // handles the session moved away from (move_to), closed after it
  std::string wide_hosts;           // every server's "address:port" while the handle has only the first choices
};

// Hands `request` to the client through `call(handle, context)`. Without a handle (the hosts are
// still being looked up, or none resolved) the session is not connected: connection_loss, as the
// client answers what it cannot send. ZMARSHALLINGERROR is ambiguous: the client returns it when
// it queued nothing (an invalid path inside a multi) and when it queued the completion but not the
// request (out of memory). So the context then stays with the client: a later completion finds the
// result delivered, and in the first case the context leaks (a few bytes, for a caller's bug).
template <class Req, class Call>
void submit_to(HandleSlot& slot, const std::shared_ptr<Req>& request, Call call) {
  int rc = ZOK;
  {
    std::lock_guard lock(slot.mutex);
    if (slot.close_started) {
      rc = ZCLOSING;
    } else if (!slot.handle) {
      rc = ZCONNECTIONLOSS;
    } else {
      const void* context = hand_to_client(request);
      rc = call(slot.handle, context);
      if (rc != ZOK && rc != ZMARSHALLINGERROR) take_back<Req>(context);
    }
  }
  if (rc != ZOK) request->deliver(with_error<typename Req::Result>(rc));
}

// The completions: C function pointers, one per result shape; each takes its request back.
void on_created_path(int rc, const char* path, const void* context);  // zoo_acreate's: no stat
void on_read(int rc, const char* value, int length, const Stat* stat, const void* context);
void on_stat(int rc, const Stat* stat, const void* context);
void on_children(int rc, const String_vector* names, const void* context);
void on_acl(int rc, ACL_vector* acl, Stat* stat, const void* context);
void on_done(int rc, const void* context);
void on_synced(int rc, const char* path, const void* context);
void on_multi_done(int rc, const void* context);

// Fills `op` with pointers into `request`, which must outlive the zoo_amulti call (not the reply).
void describe(const MultiOp& request, zoo_op_t& op, ACL_vector* acl);

}  // namespace zkverify::probes::c_client
