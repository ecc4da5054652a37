#pragma once
// The tests' own sessions (zkverify's run in its process): one executor and one C-client factory
// for the test process, as main() has. Apart from lab.hpp: a test that says `using lab::zkverify`
// cannot see the namespace zkverify at the top level too.

#include "probes/executor.hpp"
#include "probes/keeper.hpp"

namespace lab {

::zkverify::probes::Executor& executor();
::zkverify::probes::KeeperFactory& keepers();

}  // namespace lab
