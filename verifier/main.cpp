// zkverify's entry point: the command line with the process's executor, the C client's sessions
// and the process's streams.

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "probes/c_keeper.hpp"
#include "probes/executor.hpp"
#include "verifier/commands/command.hpp"

int main(int argc, char** argv) {
  // The environment is read here, before any thread exists (getenv races with setenv elsewhere).
  zkverify::probes::CClientSettings client;
  if (const char* log = std::getenv("ZKVERIFY_ZK_LOG")) client.log_path = log;  // NOLINT(concurrency-mt-unsafe)
  zkverify::probes::Executor executor;
  zkverify::probes::CKeeperFactory keepers(executor, zkverify::probes::system_resolver(), client);
  zkverify::verifier::Context context{executor, keepers, std::cout, std::cerr};
  int code = zkverify::verifier::run_command_line(argc, argv, context);
  // A session whose close was abandoned at its deadline may still be closing on a worker: the exit
  // does not wait for it (its server expires the session), as the deadline promised. So the output
  // is flushed and the process ends here, before the executor would join its workers.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
