#pragma once
// The keeper seam's real implementation: sessions of the ZooKeeper C client (multi-threaded
// flavour). Only its asynchronous calls are used (the synchronous ones can block forever); its
// completions and events are posted to the executor, the calls that block (zookeeper_init,
// zookeeper_close) run on the executor's workers, host names are looked up by the resolver.

#include <optional>
#include <string>

#include "probes/executor.hpp"
#include "probes/io.hpp"
#include "probes/keeper.hpp"
#include "probes/resolver.hpp"

namespace zkverify::probes {

// The C client's process-wide settings: the first factory's hold for the process.
struct CClientSettings {
  std::optional<std::string> log_path;  // the client's own log (INFO); none: no log
};

class CKeeperFactory final : public KeeperFactory {
 public:
  // Both must outlive every session it opens.
  explicit CKeeperFactory(Executor& executor, Resolver& resolver = system_resolver(),
                          const CClientSettings& settings = {});
  std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                               Keeper::Listener listener = nullptr) override;

 private:
  Executor& executor_;
  Resolver& resolver_;
  int init_flags_;  // zookeeper_init's, for the settings
};

}  // namespace zkverify::probes
