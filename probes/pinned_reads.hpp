#pragma once
// Reading through every server: a session pinned to each (a session given one host stays on it),
// and on each a sync followed by reads, pipelined. A server answers one session's requests in
// order, so the reads see at least what the leader had committed when the sync reached it. The
// round trip, smoke's cases and the watch's read-backs all read this way.

#include <memory>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "probes/keeper.hpp"

namespace zkverify::probes {

// Sessions pinned one to each of `servers`, all opening at once, each with `listener` (if any).
std::vector<std::unique_ptr<Keeper>> open_pinned(KeeperFactory& keepers, const std::vector<ServerAddress>& servers,
                                                 const KeeperOptions& options,
                                                 const Keeper::Listener& listener = nullptr);

// A sync of `sync_path`, then a get of each of `paths`, sent at once on one session.
class SyncedReads {
 public:
  SyncedReads(Keeper& session, const std::string& sync_path, const std::vector<std::string>& paths);

  struct Read {
    GetResult result;             // its error is the sync's when the sync failed: a read is only as good
    Clock::time_point completed;  // when it came (now, for one not in by the deadline)
  };
  // Every read, in the order of `paths`, by `deadline` (deadline_exceeded for one not in by then).
  std::vector<Read> await(Clock::time_point deadline);
  [[nodiscard]] Clock::time_point started() const { return started_; }

 private:
  // A read that notes when it completed: the reads are awaited one after another, so the moment an
  // await returns says nothing about that read's latency.
  struct TimedRead {
    Expect<GetResult> result;
    std::shared_ptr<Clock::time_point> completed = std::make_shared<Clock::time_point>();
  };
  Clock::time_point started_;
  Expect<DoneResult> sync_;
  std::vector<TimedRead> reads_;
};

}  // namespace zkverify::probes
