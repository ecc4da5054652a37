#pragma once
// Requests in the C client's hands: each holds the caller's callback and delivers it exactly once,
// posted to the session's strand (never on the client's thread, never inside the call that started
// the operation), and the completion functions the client calls with each reply.

#include <atomic>
#include <memory>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <zookeeper/zookeeper.h>
#include <boost/asio/post.hpp>

#include "probes/actor.hpp"
#include "probes/c_client.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes::c_client {

template <class R>
class Request {
 public:
  using Result = R;
  Request(ActorCore::Strand strand, Keeper::Callback<R> done) : strand_(std::move(strand)), done_(std::move(done)) {}
  void deliver(R result) {
    if (delivered_.test_and_set()) return;
    boost::asio::post(strand_,
                      [done = std::move(done_), result = std::move(result)]() mutable { done(std::move(result)); });
  }

 private:
  ActorCore::Strand strand_;
  Keeper::Callback<R> done_;
  std::atomic_flag delivered_;
};

// A multi's per-operation answers are written by the client into `answers` when the reply comes,
// so they live as long as the request.
class MultiRequest : public Request<MultiResult> {
 public:
  // Marks an answer the client never wrote (the whole multi failed, e.g. on connection loss).
  static constexpr int kUnanswered = static_cast<int>(ZkError::not_attempted);

  MultiRequest(ActorCore::Strand strand, Keeper::Callback<MultiResult> done, std::size_t count)
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
