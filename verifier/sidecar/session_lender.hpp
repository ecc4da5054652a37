#pragma once
// The sidecar's long-lived session on its own server, lent to every cycle's round trip.

#include <memory>
#include <mutex>
#include <vector>
#include "probes/io.hpp"

#include "probes/keeper.hpp"

namespace zkverify::verifier {

// A KeeperFactory that lends its one long-lived session pinned to `local` to whoever opens a
// session on that server alone (closing the loan leaves it open), and opens every other session
// with `keepers`. A session that expired or closed is replaced at the next open.
class LocalSessionLender final : public probes::KeeperFactory {
 public:
  LocalSessionLender(probes::KeeperFactory& keepers, ServerAddress local);
  ~LocalSessionLender() override;
  std::unique_ptr<probes::Keeper> open(const std::vector<ServerAddress>& servers, const probes::KeeperOptions& options,
                                       probes::Keeper::Listener listener) override;
  // Closes the long-lived session by `deadline` (its ephemeral znodes go with it); true when it closed in time.
  bool close(Clock::time_point deadline);

 private:
  // The long-lived session, opened again when the last one is over.
  std::shared_ptr<probes::Keeper> current(const probes::KeeperOptions& options);

  probes::KeeperFactory& keepers_;
  ServerAddress local_;
  std::mutex mutex_;  // guards session_ (the pointer, never a call on it)
  std::shared_ptr<probes::Keeper> session_;
};

}  // namespace zkverify::verifier
