#pragma once
// What a check, a step and a command talk to: the executor (its io_context, its workers, the stop
// signals), the servers' sessions, the streams and the environment.

#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "probes/executor.hpp"
#include "probes/keeper.hpp"

namespace zkverify::verifier {

// A variable of the environment, if set: the process's, or a test's map.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

inline std::optional<std::string> process_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): nothing here sets variables
  return value ? std::optional<std::string>(value) : std::nullopt;
}

// What a command talks to: sessions come from `keepers` (the C client, or a fake in tests).
struct Context {
  probes::Executor& executor;
  probes::KeeperFactory& keepers;
  std::ostream& out;
  std::ostream& err;
  Environment environment = process_environment;
};

}  // namespace zkverify::verifier
