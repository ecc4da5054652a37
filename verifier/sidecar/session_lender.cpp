#include "verifier/sidecar/session_lender.hpp"

#include <utility>

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
  return std::make_unique<LentSession>(current(options));
}

// The mutex guards only the pointer: a session's state, open and close (which may wait for the
// session's actor) run outside it, so a close from a stop never waits behind an open.
std::shared_ptr<probes::Keeper> LocalSessionLender::current(const probes::KeeperOptions& options) {
  std::shared_ptr<probes::Keeper> seen;
  {
    std::lock_guard lock(mutex_);
    seen = session_;
  }
  if (seen && !is_finished(seen->state())) return seen;
  std::shared_ptr<probes::Keeper> fresh = keepers_.open({local_}, options, nullptr);
  std::shared_ptr<probes::Keeper> retired;
  {
    std::lock_guard lock(mutex_);
    if (session_ == seen || !session_) {
      retired = std::exchange(session_, fresh);
    } else {  // another open replaced it meanwhile: that one is lent, this one goes
      retired = std::exchange(fresh, session_);
    }
  }
  if (retired) retired->close(Clock::now());  // over, or never lent: abandoned at once
  return fresh;
}

bool LocalSessionLender::close(Clock::time_point deadline) {
  std::shared_ptr<probes::Keeper> session;
  {
    std::lock_guard lock(mutex_);
    session = std::exchange(session_, nullptr);
  }
  return !session || session->close(deadline);
}

}  // namespace zkverify::verifier
