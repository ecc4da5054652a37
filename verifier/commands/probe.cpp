// `zkverify probe`: the sidecar's local readiness decided once, for exec probes. Exit 0 ready, 1
// not, 64 usage; one line of output. The local server sees one four-letter-word connection, then
// one session: never more than 2 at a time.

#include <ostream>

#include <fmt/format.h>

#include "probes/host.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/local_server.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/sidecar/cycle.hpp"

namespace zkverify::verifier {

namespace {

struct ProbeOptions : EnsembleOptions {
  std::string local;  // --local NAME; default: the host name
};

class ProbeCommand final : public Command {
 public:
  std::string_view name() const override { return "probe"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "probe", "Exit 0 when the local server serves and is synced with the ensemble, 1 when not, 64 usage error");
    add_servers_option(command, options_.servers);
    add_local_check_options(command, options_, options_.local);
    add_duration_option(command, "--timeout", options_.timeout, "Deadline for the check (default 5s)");
    return command;
  }

  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    auto local = choose_local(options_.servers, options_.local, probes::local_host_name());
    auto result = run_cycle(options_, local, context.executor, context.keepers, tls_client_of(context));
    const auto& readiness = result.readiness;
    if (readiness.ready) context.out << fmt::format("ready: {} (sync proof: {})\n", local, to_string(readiness.proof));
    else context.out << fmt::format("not ready: {}: {}\n", local, first_failure(readiness));
    context.out << std::flush;
    return readiness.ready ? kExitHealthy : kExitDegraded;
  }

 private:
  ProbeOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_probe_command() { return std::make_unique<ProbeCommand>(); }

}  // namespace zkverify::verifier
