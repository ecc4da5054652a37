#include "verifier/sidecar/session_lender.hpp"

#include "probes/forwarding_keeper.hpp"

namespace zkverify::verifier {

namespace {

// A loan of the long-lived session: closing the loan does not close it (the lender does, at the end).
class LentSession final : public probes::ForwardingKeeper {
 public:
  using probes::ForwardingKeeper::ForwardingKeeper;
  bool close(Clock::time_point) override { return true; }
  bool close_ends_session() const override { return false; }
};

bool is_finished(SessionState state) {
  return state == SessionState::expired || state == SessionState::auth_failed || state == SessionState::closed;
}

}  // namespace

LocalSessionLender::LocalSessionLender(probes::KeeperFactory& keepers, ServerAddress local)
    : keepers_(keepers), local_(std::move(local)) {}

LocalSessionLender::~LocalSessionLender() { close(Clock::now() + std::chrono::seconds(1)); }

std::unique_ptr<probes::Keeper> LocalSessionLender::open(const std::vector<ServerAddress>& servers,
                                                         const probes::KeeperOptions& options,
                                                         probes::Keeper::Listener listener) {
  if (servers.size() != 1 || servers.front().name != local_.name)
    return keepers_.open(servers, options, std::move(listener));
  std::lock_guard lock(mutex_);
  if (!session_ || is_finished(session_->state())) {
    if (session_) session_->close(Clock::now());  // already over: abandons at once
    session_ = keepers_.open({local_}, options, nullptr);
  }
  return std::make_unique<LentSession>(session_);
}

bool LocalSessionLender::close(Clock::time_point deadline) {
  std::lock_guard lock(mutex_);
  if (!session_) return true;
  bool closed = session_->close(deadline);
  session_.reset();
  return closed;
}

}  // namespace zkverify::verifier
