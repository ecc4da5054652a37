#include "verifier/commands/watch.hpp"

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/watch_judge.hpp"
#include "model/render/watch_view.hpp"
#include "verifier/check/output.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"

namespace zkverify::verifier {

using std::chrono::milliseconds;

void add_watch_tuning_options(CLI::App& command, WatchTuning& tuning) {
  command.add_option_function<double>(
      "--rate",
      [&tuning](double rate) {
        if (!(rate >= 1 && rate <= 1000)) throw_usage(fmt::format("--rate {}: use 1 to 1000 writes a second", rate));
        tuning.rate = rate;
      },
      "Writes per second, through the sessions in turn (default 20)");
  add_duration_option(command, "--session-timeout", tuning.session_timeout,
                      "Session timeout to ask the servers for (default 10s)");
  add_duration_option(command, "--max-unavailable", tuning.max_unavailable,
                      "Fail (exit 2) when writes failed for longer than this in a row");
}

probes::WatchSettings watch_settings(std::vector<ServerAddress> servers, const std::string& namespace_path,
                                     const WatchTuning& tuning, std::vector<std::string> client_paths) {
  probes::WatchSettings settings;
  settings.servers = std::move(servers);
  settings.namespace_path = namespace_path;
  settings.rate = tuning.rate;
  settings.session_timeout = tuning.session_timeout;
  settings.client_paths = std::move(client_paths);
  return settings;
}

namespace {

struct WatchOptions {
  std::vector<ServerAddress> servers;
  std::optional<std::chrono::milliseconds> duration;  // until SIGINT/SIGTERM when unset
  OutputFormat output = OutputFormat::text;
  std::string namespace_path = "/zkverify";
  WatchTuning tuning;
  std::chrono::milliseconds timeout{10000};  // to connect the sessions at the start
  ConnectionOptions connection;              // --auth-file, --tls-*
  std::vector<std::string> client_paths;     // --clients: registrations followed live
};

class WatchCommand final : public Command {
 public:
  std::string_view name() const override { return "watch"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "watch", "Client sessions and ordered writes beside an upgrade: events as they happen, a summary at the end");
    add_servers_option(command, options_.servers);
    add_connection_options(command, options_.connection);
    add_duration_option(command, "--duration", options_.duration,
                        "Stop after this long (default: at SIGINT or SIGTERM)");
    add_output_option(command, options_.output, "text or json lines (default text)");
    add_duration_option(command, "--timeout", options_.timeout,
                        "Deadline for the start: every session connected and its znodes created (default 10s)");
    add_namespace_option(command, options_.namespace_path);
    add_watch_tuning_options(command, options_.tuning);
    add_clients_option(command, options_.client_paths);
    return command;
  }

  // Exit 0 when no session expired, no acknowledged write was lost and no window of unavailability
  // was longer than --max-unavailable; 2 otherwise, or when the watch cannot start.
  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    probes::WatchEngine engine(
        watch_settings(options_.servers, options_.namespace_path, options_.tuning, options_.client_paths),
        context.executor, context.keepers,
        [say = context.output->sayer(), output = options_.output](const WatchEvent& event) {
          say(Channel::out, render_event(event, output));
        });
    auto& stop = context.executor.stop();
    stop.install();
    auto start_by = Clock::now() + options_.timeout;
    if (auto error = engine.start(start_by)) {
      context.err << "zkverify watch: cannot start: " << *error << "\n";
      return kExitCritical;
    }
    // Said once every session is connected and has its znodes: from here on the watch counts.
    context.err << fmt::format("zkverify watch: started: {} writing under {}\n",
                               counted(static_cast<long long>(options_.servers.size()), "session"),
                               options_.namespace_path)
                << std::flush;
    wait_for_the_end(stop);
    engine.stop();
    auto totals = engine.totals();
    auto findings = judge_watch(totals, options_.tuning.max_unavailable);
    if (!options_.client_paths.empty())
      for (auto& finding : client_findings(engine.clients())) findings.push_back(std::move(finding));
    context.out << render_watch_summary(totals, findings, options_.output) << std::flush;
    return findings.empty() ? kExitHealthy : kExitCritical;
  }

 private:
  // --duration's end, or a stop: the process's one wait for the command's end (the engine follows
  // the clients meanwhile).
  void wait_for_the_end(probes::StopSignals& stop) const {
    constexpr auto kLong = std::chrono::hours(1);  // without --duration: until a stop
    auto end = options_.duration ? std::optional(Clock::now() + *options_.duration) : std::nullopt;
    while (!stop.requested() && (!end || Clock::now() < *end)) stop.wait_until(end.value_or(Clock::now() + kLong));
  }

  // --clients: the registrations at the end against the first look, as a step compares them, and
  // the paths the last round could not read.
  static std::vector<Finding> client_findings(const probes::ClientsFollowed& clients) {
    auto found = zkverify::client_findings(clients.first, clients.last,
                                           LossContext{"during the watch", {}, {}, {}, {}, {}, clients.absences});
    for (auto& unread : unread_client_findings(clients.now)) found.push_back(std::move(unread));
    return found;
  }

  WatchOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_watch_command() { return std::make_unique<WatchCommand>(); }

}  // namespace zkverify::verifier
