#include "probes/pinned_reads.hpp"

namespace zkverify::probes {

std::vector<std::unique_ptr<Keeper>> open_pinned(KeeperFactory& keepers, const std::vector<ServerAddress>& servers,
                                                 const KeeperOptions& options, const Keeper::Listener& listener) {
  std::vector<std::unique_ptr<Keeper>> sessions;
  for (const auto& server : servers) sessions.push_back(keepers.open({server}, options, listener));
  return sessions;
}

SyncedReads::SyncedReads(Keeper& session, const std::string& sync_path, const std::vector<std::string>& paths)
    : started_(Clock::now()), reads_(paths.size()) {
  session.sync(sync_path, sync_.callback());
  for (std::size_t i = 0; i < paths.size(); ++i)
    session.get(paths[i], [done = reads_[i].result.callback(), completed = reads_[i].completed](GetResult read) {
      *completed = Clock::now();
      done(std::move(read));
    });
}

std::vector<SyncedReads::Read> SyncedReads::await(Clock::time_point deadline) {
  auto synced = sync_.await(deadline).error;
  std::vector<Read> out;
  for (auto& read : reads_) {
    auto result = read.result.await(deadline);
    auto completed = result.error == ZkError::deadline_exceeded ? Clock::now() : *read.completed;
    if (synced != ZkError::ok) result.error = synced;
    out.push_back({std::move(result), completed});
  }
  return out;
}

}  // namespace zkverify::probes
