#pragma once
// One executor and one C-client factory for the unit tests that need them, as main() has one for
// the process. A test that requests stop signals makes an Executor of its own (a stop stays).

#include "probes/c_keeper.hpp"
#include "probes/executor.hpp"

inline zkverify::probes::Executor& test_executor() {
  static zkverify::probes::Executor executor;
  return executor;
}

inline zkverify::probes::KeeperFactory& test_keepers() {
  static zkverify::probes::CKeeperFactory keepers(test_executor());
  return keepers;
}
