#pragma once
// One sidecar cycle: the same facts and judgement as `quorum` (gather, judge), plus the local
// server's readiness. The round trip's read on the local server goes through one long-lived
// session pinned to it (LocalSessionLender), so that server sees at most that session and one
// four-letter-word connection from the sidecar: never more than 2 (maxClientCnxns is per IP).

#include "probes/io.hpp"
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "probes/keeper.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/sidecar/status.hpp"

namespace zkverify::verifier {

// A KeeperFactory that lends its one long-lived session pinned to `local` to whoever opens a
// session on that server alone (closing the loan leaves it open), and opens every other session
// with `keepers`. A session that expired or closed is replaced at the next open.
class LocalSessionLender final : public probes::KeeperFactory {
 public:
  LocalSessionLender(probes::KeeperFactory& keepers, probes::ServerAddress local);
  ~LocalSessionLender() override;
  std::unique_ptr<probes::Keeper> open(const std::vector<probes::ServerAddress>& servers,
                                       const probes::KeeperOptions& options, probes::Keeper::Listener listener) override;
  // Closes the long-lived session by `deadline` (its ephemeral znodes go with it); true when it closed in time.
  bool close(probes::Clock::time_point deadline);

 private:
  probes::KeeperFactory& keepers_;
  probes::ServerAddress local_;
  std::mutex mutex_;
  std::shared_ptr<probes::Keeper> session_;
};

// Another factory's sessions, every one of which stop() closes at once (SIGTERM): an operation in
// flight then completes with `closing`, so the cycle in progress ends within the stop's deadline,
// and the servers remove the ephemeral znodes of the sessions closed (the round trip's node).
// Sessions opened after stop() are closed as they open.
class StoppableFactory final : public probes::KeeperFactory {
 public:
  explicit StoppableFactory(probes::KeeperFactory& keepers);
  std::unique_ptr<probes::Keeper> open(const std::vector<probes::ServerAddress>& servers,
                                       const probes::KeeperOptions& options, probes::Keeper::Listener listener) override;
  // Closes every session opened and not yet gone, together, by `deadline`; true when all closed in time.
  bool stop(probes::Clock::time_point deadline);

 private:
  probes::KeeperFactory& keepers_;
  std::mutex mutex_;
  bool stopped_ = false;
  std::vector<std::weak_ptr<probes::Keeper>> opened_;
};

// Looks once: gather and judge as quorum does, then the local readiness. `keepers` should be a
// LocalSessionLender for serve (any factory for probe).
CycleResult run_cycle(const EnsembleOptions& options, const std::string& local, probes::KeeperFactory& keepers);

// The flags serve and probe share, added after --servers: --local, --admin-port, --namespace, --no-write.
void add_local_check_options(CLI::App& command, EnsembleOptions& options, std::string& local);

// --local's default: the listed server named like this host; the only server when there is one.
// Throws a usage error naming the host name and the servers when neither applies.
std::string choose_local(const std::vector<probes::ServerAddress>& servers, const std::string& local_flag,
                         const std::string& host_name);

}  // namespace zkverify::verifier
