#pragma once
// What a check, a step and a command talk to: the executor (its io_context, its workers, the stop
// signals), the servers' sessions and the streams.

#include <iosfwd>

#include "probes/executor.hpp"
#include "probes/keeper.hpp"

namespace zkverify::verifier {

// What a command talks to: sessions come from `keepers` (the C client, or a fake in tests).
struct Context {
  probes::Executor& executor;
  probes::KeeperFactory& keepers;
  std::ostream& out;
  std::ostream& err;
};

}  // namespace zkverify::verifier
