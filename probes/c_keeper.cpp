#include "probes/c_keeper.hpp"

#include <atomic>
#include <future>
#include <mutex>
#include <utility>

#include <zookeeper/zookeeper.h>
#include <boost/asio/post.hpp>

#include "probes/c_client.hpp"
#include "probes/c_create.hpp"
#include "probes/c_session.hpp"

namespace zkverify::probes {

namespace {

using namespace c_client;

// The command's handle on one session (c_session.hpp): every operation is told to the session's
// strand, in the order called; questions are asked of it.
class CKeeper final : public Keeper {
 public:
  CKeeper(Executor& executor, Resolver& resolver, const std::vector<ServerAddress>& servers,
          const KeeperOptions& options, Listener listener, int init_flags);
  ~CKeeper() override;
  CKeeper(const CKeeper&) = delete;
  CKeeper& operator=(const CKeeper&) = delete;

  ZkError wait_connected(Clock::time_point deadline) override;
  [[nodiscard]] SessionState state() const override {
    return session_->published_state();  // never an ask: callers on executor threads need it too
  }
  [[nodiscard]] std::optional<std::int64_t> session_id() const override {
    return ask_now(session_, [](CSession& self) { return self.session_id(); });
  }
  [[nodiscard]] std::string connected_server() const override {
    return ask_now(session_, [](CSession& self) { return self.connected_server(); });
  }
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const override {
    return ask_now(session_, [](CSession& self) { return self.negotiated_timeout(); });
  }

  void create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) override;
  void get(const std::string& path, Callback<GetResult> done) override;
  void set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) override;
  void exists(const std::string& path, Callback<StatResult> done) override;
  void children(const std::string& path, Callback<ChildrenResult> done) override;
  void remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) override;
  void sync(const std::string& path, Callback<DoneResult> done) override;
  void multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) override;
  void get_acl(const std::string& path, Callback<AclResult> done) override;
  [[nodiscard]] bool presents_credentials() const override { return credentials_.has_value() || sasl_; }
  // The C client speaks no SASL: a relay in front of it does (probes/relay.hpp).
  [[nodiscard]] std::optional<SaslRefusal> sasl_refusal() const override { return std::nullopt; }
  void get_and_watch(const std::string& path, Callback<GetResult> done,
                     std::function<void(WatchNotice)> fired) override;
  void children_and_watch(const std::string& path, Callback<ChildrenResult> done,
                          std::function<void(WatchNotice)> fired) override;
  ZkError move_to(const std::string& server) override {
    return ask_now(session_, [server](CSession& self) { return self.move_to(server); });
  }
  bool wait_connected_to(const std::string& server, Clock::time_point deadline) const override;
  [[nodiscard]] bool close_ends_session() const override { return true; }
  bool return_home() override {
    return ask_now(session_, [](CSession& self) { return self.return_home(); });
  }
  [[nodiscard]] bool can_return_home() const override {
    return ask_now(session_, [](CSession& self) { return self.can_return_home(); });
  }
  void widen(const std::vector<std::string>& crowded) override {
    tell(session_, [crowded](CSession& self) { self.widen(crowded); });
  }

  bool close(Clock::time_point deadline) override;

 private:
  // `call(handle, context)` on the strand, for a request whose completion delivers `done`. The
  // call owns what it passes to the client: it runs after this returns.
  template <class R, class Call>
  void submit(Callback<R> done, Call call) {
    auto request = std::make_shared<Request<R>>(session_->strand(), std::move(done));
    tell(session_, [request, call = std::move(call)](CSession& self) mutable { self.submit(request, call); });
  }
  // As submit, for a read that leaves a one-shot watch: `call(handle, watch, context)`, where
  // `watch` is the watcher's context, kept by the session; `fired` runs on the session's strand,
  // like its completions.
  template <class R, class Call>
  void submit_watched(Callback<R> done, std::function<void(WatchNotice)> fired, Call call) {
    auto request = std::make_shared<Request<R>>(session_->strand(), std::move(done));
    tell(session_, [request, fired = std::move(fired), call = std::move(call)](CSession& self) mutable {
      auto* watch = self.keep_watch([strand = self.strand(), fired = std::move(fired)](WatchNotice notice) {
        boost::asio::post(strand, [fired, notice = std::move(notice)] { fired(notice); });
      });
      self.submit(request, [&](zhandle_t* zh, const void* context) { return call(zh, watch, context); });
    });
  }
  // What the session creates: creator-only (its credentials' identity) when it has credentials.
  [[nodiscard]] ACL_vector* acl() const { return presents_credentials() ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE; }

  const std::optional<Credentials> credentials_;
  const bool sasl_;
  const std::shared_ptr<CSession> session_;
  // The close, started once: by whichever thread calls close() first (a stop signal's, say).
  std::once_flag close_once_;
  std::atomic<bool> close_started_{false};
  std::shared_future<void> closed_;
};

CKeeper::CKeeper(Executor& executor, Resolver& resolver, const std::vector<ServerAddress>& servers,
                 const KeeperOptions& options, Listener listener, int init_flags)
    : credentials_(options.credentials),
      sasl_(options.sasl),
      session_(std::make_shared<CSession>(executor, std::move(listener), options, init_flags)) {
  std::vector<std::string> hosts;
  for (const auto& server : servers) hosts.push_back(server.host);
  // A server not resolved within the session timeout could not hold a session anyway.
  resolve_all(session_->strand(), resolver, std::move(hosts), Clock::now() + options.session_timeout,
              [session = session_, task = session_->task(), servers](std::vector<Resolution> found) {
                session->open(servers, std::move(found));
              });
}

// Bounded: a close that takes longer is abandoned, and the server expires the session.
// A close already started (and maybe abandoned at its own deadline) is not waited for again.
CKeeper::~CKeeper() {
  if (!close_started_.load(std::memory_order_acquire)) close(Clock::now() + std::chrono::seconds(2));
}

ZkError CKeeper::wait_connected(Clock::time_point deadline) {
  auto outcome = ask_now(session_, [](CSession& self) { return self.when_connected(); });
  if (outcome.wait_until(deadline) != std::future_status::ready) return ZkError::deadline_exceeded;
  return outcome.get();
}

bool CKeeper::wait_connected_to(const std::string& server, Clock::time_point deadline) const {
  auto there = ask_now(session_, [server](CSession& self) { return self.when_connected_to(server); });
  return there.wait_until(deadline) == std::future_status::ready && there.get();
}

// create + exists on every line (c_create.hpp says why not create2).
void CKeeper::create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) {
  tell(session_, [create = PlainCreate{path, data, mode, acl()}, done = std::move(done)](CSession& self) mutable {
    create_then_stat(std::static_pointer_cast<CSession>(self.shared_from_this()), create, std::move(done));
  });
}

void CKeeper::get(const std::string& path, Callback<GetResult> done) {
  submit(std::move(done),
         [path](zhandle_t* zh, const void* context) { return zoo_aget(zh, path.c_str(), 0, &on_read, context); });
}

void CKeeper::set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) {
  submit(std::move(done), [path, data, version](zhandle_t* zh, const void* context) {
    return zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version, &on_stat, context);
  });
}

void CKeeper::exists(const std::string& path, Callback<StatResult> done) {
  submit(std::move(done),
         [path](zhandle_t* zh, const void* context) { return zoo_aexists(zh, path.c_str(), 0, &on_stat, context); });
}

void CKeeper::children(const std::string& path, Callback<ChildrenResult> done) {
  submit(std::move(done), [path](zhandle_t* zh, const void* context) {
    return zoo_aget_children(zh, path.c_str(), 0, &on_children, context);
  });
}

void CKeeper::remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) {
  submit(std::move(done), [path, version](zhandle_t* zh, const void* context) {
    return zoo_adelete(zh, path.c_str(), version, &on_done, context);
  });
}

void CKeeper::sync(const std::string& path, Callback<DoneResult> done) {
  submit(std::move(done),
         [path](zhandle_t* zh, const void* context) { return zoo_async(zh, path.c_str(), &on_synced, context); });
}

// The ops' strings live in the request handler until zoo_amulti has copied them into its packet.
void CKeeper::multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) {
  auto request = std::make_shared<MultiRequest>(session_->strand(), std::move(done), ops.size());
  tell(session_, [request, ops, acl = acl()](CSession& self) {
    std::vector<zoo_op_t> c_ops(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) describe(ops[i], c_ops[i], acl);
    self.submit(request, [&](zhandle_t* zh, const void* context) {
      return zoo_amulti(zh, static_cast<int>(c_ops.size()), c_ops.data(), request->answers.data(), &on_multi_done,
                        context);
    });
  });
}

void CKeeper::get_acl(const std::string& path, Callback<AclResult> done) {
  submit(std::move(done),
         [path](zhandle_t* zh, const void* context) { return zoo_aget_acl(zh, path.c_str(), &on_acl, context); });
}

void CKeeper::get_and_watch(const std::string& path, Callback<GetResult> done, std::function<void(WatchNotice)> fired) {
  submit_watched(std::move(done), std::move(fired), [path](zhandle_t* zh, void* watch, const void* context) {
    return zoo_awget(zh, path.c_str(), &CSession::on_watch, watch, &on_read, context);
  });
}

void CKeeper::children_and_watch(const std::string& path, Callback<ChildrenResult> done,
                                 std::function<void(WatchNotice)> fired) {
  submit_watched(std::move(done), std::move(fired), [path](zhandle_t* zh, void* watch, const void* context) {
    return zoo_awget_children(zh, path.c_str(), &CSession::on_watch, watch, &on_children, context);
  });
}

// Tells the session to close and waits for its answer until the deadline: never an ask, so that a
// stop signal's callback, on an executor thread, may start a close (with a deadline already passed,
// it does not wait).
bool CKeeper::close(Clock::time_point deadline) {
  close_started_.store(true, std::memory_order_release);
  std::call_once(close_once_, [this] {
    std::promise<void> done;
    closed_ = done.get_future().share();
    tell(session_, [done = std::move(done)](CSession& self) mutable { self.close(std::move(done)); });
  });
  return closed_.wait_until(deadline) == std::future_status::ready;
}

}  // namespace

CKeeperFactory::CKeeperFactory(Executor& executor, Resolver& resolver, const CClientSettings& settings)
    : executor_(executor), resolver_(resolver), init_flags_(c_client::configure(settings.log_path)) {}

std::unique_ptr<Keeper> CKeeperFactory::open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                                             Keeper::Listener listener) {
  return std::make_unique<CKeeper>(executor_, resolver_, servers, options, std::move(listener), init_flags_);
}

}  // namespace zkverify::probes
