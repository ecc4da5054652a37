#pragma once
// What a check, a step and a command talk to: the executor (its io_context, its workers, the stop
// signals), the servers' sessions, the streams and the environment.

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "probes/executor.hpp"
#include "probes/keeper.hpp"
#include "probes/tls.hpp"

namespace zkverify::verifier {

class Output;  // output.hpp

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
  // TLS to the servers (--tls-ca), when on: the client in use, which the sidecar renews.
  std::shared_ptr<probes::TlsSource> tls = nullptr;
  std::chrono::milliseconds tls_expiry_warning{std::chrono::hours(24 * 14)};
  // The actor that owns out and err (output.hpp): set by run_command_line, whose out and err are
  // its streams. Threads other than the command's hand it their text.
  Output* output = nullptr;
};

// The TLS client for the probes' connections: none when TLS is off.
inline std::shared_ptr<const probes::TlsClient> tls_client_of(const Context& context) {
  return context.tls ? context.tls->current() : nullptr;
}

}  // namespace zkverify::verifier
