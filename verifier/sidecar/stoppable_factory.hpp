#pragma once
// Sessions that one call closes at once: the sidecar's answer to SIGTERM.

#include <memory>
#include <mutex>
#include <vector>
#include "probes/io.hpp"

#include "probes/keeper.hpp"

namespace zkverify::verifier {

// Another factory's sessions, every one of which stop() closes at once (SIGTERM): an operation in
// flight then completes with `closing`, so the cycle in progress ends within the stop's deadline,
// and the servers remove the ephemeral znodes of the sessions closed (the round trip's node).
// Sessions opened after stop() are closed as they open.
class StoppableFactory final : public probes::KeeperFactory {
 public:
  explicit StoppableFactory(probes::KeeperFactory& keepers);
  std::unique_ptr<probes::Keeper> open(const std::vector<ServerAddress>& servers, const probes::KeeperOptions& options,
                                       probes::Keeper::Listener listener) override;
  // Closes every session opened and not yet gone, together, by `deadline`; true when all closed in
  // time. A deadline already passed only starts the closes; a later call waits for the same ones.
  bool stop(Clock::time_point deadline);

 private:
  probes::KeeperFactory& keepers_;
  std::mutex mutex_;
  bool stopped_ = false;
  std::vector<std::weak_ptr<probes::Keeper>> opened_;
};

}  // namespace zkverify::verifier
