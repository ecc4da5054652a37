#include "verifier/sidecar/stoppable_factory.hpp"

#include "probes/forwarding_keeper.hpp"

namespace zkverify::verifier {

namespace {

// A session the StoppableFactory keeps track of: its owner closes it as usual.
class TrackedSession final : public probes::ForwardingKeeper {
 public:
  using probes::ForwardingKeeper::ForwardingKeeper;
  bool close(Clock::time_point deadline) override { return session().close(deadline); }
};

}  // namespace

StoppableFactory::StoppableFactory(probes::KeeperFactory& keepers) : keepers_(keepers) {}

std::unique_ptr<probes::Keeper> StoppableFactory::open(const std::vector<ServerAddress>& servers,
                                                       const probes::KeeperOptions& options,
                                                       probes::Keeper::Listener listener) {
  std::shared_ptr<probes::Keeper> session = keepers_.open(servers, options, std::move(listener));
  bool stopped = false;
  {
    std::lock_guard lock(mutex_);  // guards the list, never a call on a session
    stopped = stopped_;
    std::erase_if(opened_, [](const auto& weak) { return weak.expired(); });
    if (!stopped) opened_.push_back(session);
  }
  if (stopped) session->close(Clock::now());  // abandoned at once: its operations answer `closing`
  return std::make_unique<TrackedSession>(std::move(session));
}

bool StoppableFactory::stop(Clock::time_point deadline) {
  std::vector<std::shared_ptr<probes::Keeper>> open;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (const auto& weak : opened_)  // kept: a later stop() waits for the same closes
      if (auto session = weak.lock()) open.push_back(std::move(session));
  }
  return probes::close_all(open, deadline) == open.size();
}

}  // namespace zkverify::verifier
