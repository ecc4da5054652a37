#include "probes/zk_session.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <zookeeper/zookeeper.h>

namespace zkverify::probes {

namespace {

// The C client logs connection attempts to stderr; zkverify reports errors itself, so the log goes
// nowhere unless ZKVERIFY_ZK_LOG names a file.
void configure_client_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* target = std::getenv("ZKVERIFY_ZK_LOG");
    // Intentionally never closed: the C client may log until the process exits.
    FILE* stream = std::fopen(target ? target : "/dev/null", "a");
    if (stream) zoo_set_log_stream(stream);
    zoo_set_debug_level(target ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_ERROR);
  });
}

}  // namespace

// Shared between a waiting caller and the C client's completion thread.
class ZkSession::PendingOp {
 public:
  void finish(int rc, auto&& fill) {
    std::lock_guard lock(mutex_);
    if (done_) return;
    rc_ = rc;
    fill(*this);
    done_ = true;
    cv_.notify_all();
  }
  ZkError wait(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_until(lock, deadline, [&] { return done_; })) return ZkError::deadline_exceeded;
    return zk_error_from_code(rc_);
  }

  // Results, valid once wait() returned ok.
  std::string path;
  std::string data;
  Stat stat{};
  std::vector<std::string> children;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  int rc_ = ZOK;
};

namespace {

// The C client takes a void* per request; it owns one reference to the op until its completion runs
// (the client runs every completion exactly once, with ZCLOSING when the handle closes first).
const void* hand_to_client(const std::shared_ptr<ZkSession::PendingOp>& op) {
  return new std::shared_ptr<ZkSession::PendingOp>(op);
}
std::shared_ptr<ZkSession::PendingOp> take_from_client(const void* data) {
  auto* holder = static_cast<std::shared_ptr<ZkSession::PendingOp>*>(const_cast<void*>(data));
  auto op = std::move(*holder);
  delete holder;
  return op;
}
void release_after_failed_submit(const void* data) { take_from_client(data); }

}  // namespace

ZkSession::ZkSession(const std::string& connect_string, std::chrono::milliseconds session_timeout,
                     StateListener listener)
    : listener_(std::move(listener)) {
  configure_client_log();
  handle_ = zookeeper_init(connect_string.c_str(), &ZkSession::on_session_event, static_cast<int>(session_timeout.count()),
                           nullptr, this, 0);
}

ZkSession::~ZkSession() {
  if (handle_) zookeeper_close(handle_);
}

void ZkSession::on_session_event(zhandle_t* zh, int type, int state, const char*, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* self = static_cast<ZkSession*>(context);
  {
    std::lock_guard lock(self->mutex_);
    self->state_ = state;
    self->changed_.notify_all();
  }
  if (self->listener_) {
    const char* server = zoo_get_current_server(zh);  // the client's own buffer: copied at once
    self->listener_(state, server ? server : "", std::chrono::milliseconds(zoo_recv_timeout(zh)));
  }
}

ZkError ZkSession::wait_connected(Clock::time_point deadline) {
  if (!handle_) return ZkError::system_error;
  std::unique_lock lock(mutex_);
  auto settled = [&] {
    return state_ == ZOO_CONNECTED_STATE || state_ == ZOO_EXPIRED_SESSION_STATE || state_ == ZOO_AUTH_FAILED_STATE;
  };
  if (!changed_.wait_until(lock, deadline, settled)) return ZkError::deadline_exceeded;
  if (state_ == ZOO_EXPIRED_SESSION_STATE) return ZkError::session_expired;
  if (state_ == ZOO_AUTH_FAILED_STATE) return ZkError::auth_failed;
  return ZkError::ok;
}

std::optional<std::int64_t> ZkSession::session_id() const {
  {
    std::lock_guard lock(mutex_);
    if (state_ != ZOO_CONNECTED_STATE) return std::nullopt;
  }
  return zoo_client_id(handle_)->client_id;
}

ZkError ZkSession::create(const std::string& path, const std::string& data, int flags, Clock::time_point deadline,
                          std::string* created_path, Zxid* czxid) {
  auto op = std::make_shared<PendingOp>();
  auto completion = [](int rc, const char* value, const Stat* stat, const void* context) {
    take_from_client(context)->finish(rc, [&](PendingOp& self) {
      if (value) self.path = value;
      if (stat) self.stat = *stat;
    });
  };
  auto* context = hand_to_client(op);
  int rc = zoo_acreate2(handle_, path.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, flags,
                        completion, context);
  if (rc != ZOK) {
    release_after_failed_submit(context);
    return zk_error_from_code(rc);
  }
  auto result = op->wait(deadline);
  if (result == ZkError::ok) {
    if (created_path) *created_path = op->path;
    if (czxid) czxid->value = static_cast<std::uint64_t>(op->stat.czxid);
  }
  return result;
}

ZkError ZkSession::remove(const std::string& path, Clock::time_point deadline) {
  auto op = std::make_shared<PendingOp>();
  auto completion = [](int rc, const void* context) { take_from_client(context)->finish(rc, [](PendingOp&) {}); };
  auto* context = hand_to_client(op);
  int rc = zoo_adelete(handle_, path.c_str(), -1, completion, context);
  if (rc != ZOK) {
    release_after_failed_submit(context);
    return zk_error_from_code(rc);
  }
  return op->wait(deadline);
}

ZkError ZkSession::exists(const std::string& path, Clock::time_point deadline) {
  auto op = std::make_shared<PendingOp>();
  auto completion = [](int rc, const Stat*, const void* context) { take_from_client(context)->finish(rc, [](PendingOp&) {}); };
  auto* context = hand_to_client(op);
  if (int rc = zoo_aexists(handle_, path.c_str(), 0, completion, context); rc != ZOK) {
    release_after_failed_submit(context);
    return zk_error_from_code(rc);
  }
  return op->wait(deadline);
}

ZkError ZkSession::remove_all(const std::vector<std::string>& paths, Clock::time_point deadline) {
  std::vector<std::shared_ptr<PendingOp>> ops;
  auto completion = [](int rc, const void* context) { take_from_client(context)->finish(rc, [](PendingOp&) {}); };
  for (const auto& path : paths) {
    auto op = std::make_shared<PendingOp>();
    auto* context = hand_to_client(op);
    if (int rc = zoo_adelete(handle_, path.c_str(), -1, completion, context); rc != ZOK) {
      release_after_failed_submit(context);
      op->finish(rc, [](PendingOp&) {});
    }
    ops.push_back(std::move(op));
  }
  ZkError first = ZkError::ok;
  for (const auto& op : ops) {
    auto result = op->wait(deadline);
    if (result != ZkError::ok && result != ZkError::no_node && first == ZkError::ok) first = result;
  }
  return first;
}

ZkError ZkSession::sync_and_children(const std::string& path, Clock::time_point deadline,
                                     std::vector<std::string>& children) {
  auto op = std::make_shared<PendingOp>();
  auto sync_done = [](int rc, const char*, const void* context) {
    auto pending = take_from_client(context);
    if (rc != ZOK) pending->finish(rc, [](PendingOp&) {});
  };
  auto listed = [](int rc, const String_vector* strings, const void* context) {
    take_from_client(context)->finish(rc, [&](PendingOp& self) {
      if (!strings) return;
      for (std::int32_t i = 0; i < strings->count; ++i) self.children.emplace_back(strings->data[i]);
    });
  };
  auto* sync_context = hand_to_client(op);
  if (int rc = zoo_async(handle_, path.c_str(), sync_done, sync_context); rc != ZOK) {
    release_after_failed_submit(sync_context);
    return zk_error_from_code(rc);
  }
  auto* list_context = hand_to_client(op);
  if (int rc = zoo_aget_children(handle_, path.c_str(), 0, listed, list_context); rc != ZOK) {
    release_after_failed_submit(list_context);
    op->finish(rc, [](PendingOp&) {});
  }
  auto result = op->wait(deadline);
  if (result == ZkError::ok) children = op->children;
  return result;
}

void ZkSession::set_async(const std::string& path, const std::string& data, SetDone done) {
  struct Request {
    SetDone done;
  };
  auto completion = [](int rc, const Stat* stat, const void* context) {
    std::unique_ptr<Request> request(static_cast<Request*>(const_cast<void*>(context)));
    request->done(zk_error_from_code(rc), stat ? stat->version : -1);
  };
  auto* request = new Request{std::move(done)};
  if (int rc = zoo_aset(handle_, path.c_str(), data.data(), static_cast<int>(data.size()), -1, completion, request);
      rc != ZOK) {
    std::unique_ptr<Request> failed(request);
    failed->done(zk_error_from_code(rc), -1);
  }
}

std::chrono::milliseconds ZkSession::negotiated_timeout() const {
  {
    std::lock_guard lock(mutex_);
    if (state_ != ZOO_CONNECTED_STATE) return std::chrono::milliseconds(0);
  }
  return std::chrono::milliseconds(zoo_recv_timeout(handle_));
}

std::vector<std::shared_ptr<ZkSession::PendingOp>> ZkSession::start_sync_and_read(
    const std::string& sync_path, const std::vector<std::string>& paths) {
  std::vector<std::shared_ptr<PendingOp>> reads;
  for (std::size_t i = 0; i < paths.size(); ++i) reads.push_back(std::make_shared<PendingOp>());
  // A failed sync fails every read queued behind it; the reads' own completions then find them done.
  auto shared_reads = std::make_shared<std::vector<std::shared_ptr<PendingOp>>>(reads);
  auto* sync_context = new std::shared_ptr<std::vector<std::shared_ptr<PendingOp>>>(shared_reads);
  auto sync_done = [](int rc, const char*, const void* context) {
    auto* holder = static_cast<std::shared_ptr<std::vector<std::shared_ptr<PendingOp>>>*>(const_cast<void*>(context));
    if (rc != ZOK)
      for (auto& read : **holder) read->finish(rc, [](PendingOp&) {});
    delete holder;
  };
  if (int rc = zoo_async(handle_, sync_path.c_str(), sync_done, sync_context); rc != ZOK) {
    delete sync_context;
    for (auto& read : reads) read->finish(rc, [](PendingOp&) {});
    return reads;
  }
  // Requests on one session are answered in order, so each read is served after the sync.
  auto read_done = [](int rc, const char* value, int length, const Stat* stat, const void* context) {
    take_from_client(context)->finish(rc, [&](PendingOp& self) {
      if (value && length > 0) self.data.assign(value, static_cast<std::size_t>(length));
      if (stat) self.stat = *stat;
    });
  };
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto* read_context = hand_to_client(reads[i]);
    if (int rc = zoo_aget(handle_, paths[i].c_str(), 0, read_done, read_context); rc != ZOK) {
      release_after_failed_submit(read_context);
      reads[i]->finish(rc, [](PendingOp&) {});
    }
  }
  return reads;
}

ZkError ZkSession::await_read(const std::shared_ptr<PendingOp>& op, Clock::time_point deadline, NodeRead& read) {
  auto result = op->wait(deadline);
  if (result == ZkError::ok) {
    read.data = op->data;
    read.czxid.value = static_cast<std::uint64_t>(op->stat.czxid);
    read.mzxid.value = static_cast<std::uint64_t>(op->stat.mzxid);
    read.version = op->stat.version;
  }
  return result;
}

}  // namespace zkverify::probes
