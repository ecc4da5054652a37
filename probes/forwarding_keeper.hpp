#pragma once
// A session that forwards every operation to another one; what close does is the subclass's.

#include <memory>

#include "probes/keeper.hpp"

namespace zkverify::probes {

// Another session's operations, all forwarded; what close does is the subclass's.
class ForwardingKeeper : public Keeper {
 public:
  explicit ForwardingKeeper(std::shared_ptr<Keeper> session) : session_(std::move(session)) {}
  ZkError wait_connected(Clock::time_point deadline) override { return session_->wait_connected(deadline); }
  SessionState state() const override { return session_->state(); }
  std::optional<std::int64_t> session_id() const override { return session_->session_id(); }
  std::string connected_server() const override { return session_->connected_server(); }
  std::chrono::milliseconds negotiated_timeout() const override { return session_->negotiated_timeout(); }
  void create(const std::string& path, const std::string& data, CreateMode mode, Callback<CreateResult> done) override {
    session_->create(path, data, mode, std::move(done));
  }
  void get(const std::string& path, Callback<GetResult> done) override { session_->get(path, std::move(done)); }
  void set(const std::string& path, const std::string& data, std::int32_t version, Callback<StatResult> done) override {
    session_->set(path, data, version, std::move(done));
  }
  void exists(const std::string& path, Callback<StatResult> done) override { session_->exists(path, std::move(done)); }
  void children(const std::string& path, Callback<ChildrenResult> done) override {
    session_->children(path, std::move(done));
  }
  void remove(const std::string& path, std::int32_t version, Callback<DoneResult> done) override {
    session_->remove(path, version, std::move(done));
  }
  void sync(const std::string& path, Callback<DoneResult> done) override { session_->sync(path, std::move(done)); }
  void multi(const std::vector<MultiOp>& ops, Callback<MultiResult> done) override {
    session_->multi(ops, std::move(done));
  }
  void get_acl(const std::string& path, Callback<AclResult> done) override { session_->get_acl(path, std::move(done)); }
  bool presents_credentials() const override { return session_->presents_credentials(); }
  std::optional<SaslRefusal> sasl_refusal() const override { return session_->sasl_refusal(); }
  void get_and_watch(const std::string& path, Callback<GetResult> done,
                     std::function<void(WatchNotice)> fired) override {
    session_->get_and_watch(path, std::move(done), std::move(fired));
  }
  void children_and_watch(const std::string& path, Callback<ChildrenResult> done,
                          std::function<void(WatchNotice)> fired) override {
    session_->children_and_watch(path, std::move(done), std::move(fired));
  }
  ZkError move_to(const std::string& server) override { return session_->move_to(server); }
  bool wait_connected_to(const std::string& server, Clock::time_point deadline) const override {
    return session_->wait_connected_to(server, deadline);
  }
  bool close_ends_session() const override { return session_->close_ends_session(); }
  void widen(const std::vector<std::string>& crowded) override { session_->widen(crowded); }
  bool return_home() override { return session_->return_home(); }
  [[nodiscard]] bool can_return_home() const override { return session_->can_return_home(); }

 protected:
  Keeper& session() { return *session_; }
  // Drops this keeper's share of the session now (closing it, if it was the last): for a subclass
  // whose own members must outlive the session.
  void release_session() { session_.reset(); }

 private:
  std::shared_ptr<Keeper> session_;
};

}  // namespace zkverify::probes
