#pragma once
// The keeper seam's real implementation: sessions of the ZooKeeper C client (multi-threaded
// flavour). Only its asynchronous calls are used (the synchronous ones can block forever).

#include "probes/io.hpp"
#include "probes/keeper.hpp"

namespace zkverify::probes {

// The process's factory of C-client sessions.
KeeperFactory& c_keeper_factory();

}  // namespace zkverify::probes
