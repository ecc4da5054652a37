// `zkverify serve`: the readiness-probe sidecar. Every --interval the same check as `quorum` plus
// the local server's sync proof (verifier/sidecar/cycle); an HTTP server answers /livez, /readyz,
// /ensemble, /metrics and / from the last cycle (verifier/sidecar/routes, http_server). One log
// line per change, not per cycle. SIGTERM stops it within a second, closing its sessions.

#include <atomic>
#include <future>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/commands/watch.hpp"
#include "model/facts/time_text.hpp"
#include "verifier/sidecar/cycle.hpp"
#include "verifier/sidecar/http_server.hpp"
#include "probes/host.hpp"
#include "verifier/commands/local_server.hpp"
#include "verifier/sidecar/session_lender.hpp"
#include "verifier/sidecar/stoppable_factory.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::milliseconds;

struct ServeOptions : EnsembleOptions {
  std::string local;                       // --local NAME; default: the host name
  ListenAddress listen{"0.0.0.0", 9181};  // --listen
  milliseconds interval{10000};            // --interval
};

// The last cycle, shared by the cycle thread (writer) and the HTTP thread (reader).
struct Shared {
  std::mutex mutex;
  SidecarStatus status;
  Clock::time_point last_cycle_end = Clock::now();
  std::atomic<bool> stopping{false};
};

void log_line(std::ostream& err, const std::string& line) {
  err << fmt::format("{} zkverify serve: {}\n", iso8601(std::chrono::system_clock::now()), line) << std::flush;
}

// Sleeps until `until` or until the sidecar stops, whichever is first.
void pause_until(Clock::time_point until, const Shared& shared) {
  while (!shared.stopping && !g_stop_requested && Clock::now() < until)
    std::this_thread::sleep_for(std::min<Clock::duration>(milliseconds(50), until - Clock::now()));
}

// The cycles, until stopped: each one's result replaces the last, and its changes are logged.
void cycle_loop(const ServeOptions& options, const std::string& local, probes::KeeperFactory& keepers,
                const std::shared_ptr<Shared>& shared, std::ostream& err) {
  while (!shared->stopping && !g_stop_requested) {
    auto started = Clock::now();
    auto result = run_cycle(options, local, keepers);
    if (shared->stopping) break;  // ended by the stop closing its sessions: says nothing of the servers
    std::vector<std::string> changes;
    {
      std::lock_guard lock(shared->mutex);
      auto& last = shared->status.last;
      changes = describe_changes(last ? &last->report : nullptr, last ? &last->readiness : nullptr, result.report,
                                 result.readiness);
      last = std::move(result);
      ++shared->status.cycles;
      shared->last_cycle_end = Clock::now();
    }
    for (const auto& line : changes) log_line(err, line);
    pause_until(started + options.interval, *shared);
  }
}

HttpServer::Handler page_handler(const std::shared_ptr<Shared>& shared, const ServeOptions& options) {
  return [shared, interval = options.interval, timeout = options.timeout](const Route& route) {
    std::lock_guard lock(shared->mutex);
    PageContext context{is_alive(shared->last_cycle_end, Clock::now(), interval, timeout), std::chrono::system_clock::now()};
    return respond(route, shared->status, context);
  };
}

class ServeCommand final : public Command {
 public:
  std::string_view name() const override { return "serve"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "serve", "Readiness sidecar: /readyz is 200 while the local server serves and is synced; also /livez, "
                 "/ensemble, /metrics, /");
    add_servers_option(command, options_.servers);
    add_local_check_options(command, options_, options_.local);
    command.add_option_function<std::string>(
        "--listen", [this](const std::string& text) { options_.listen = parse_listen(text); },
        "HOST:PORT to serve HTTP on (default 0.0.0.0:9181; IPv6 as [::]:9181)");
    add_duration_option(command, "--interval", options_.interval, "Time between cycles (default 10s)");
    add_duration_option(command, "--timeout", options_.timeout, "Deadline for one cycle (default 5s)");
    return command;
  }

  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.auth_file, given);
    const auto& context = authenticated.context();
    auto local = choose_local(options_.servers, options_.local, probes::local_host_name());
    auto local_address = *std::ranges::find(options_.servers, local, &ServerAddress::name);
    install_stop_signals();
    auto shared = std::make_shared<Shared>();
    shared->status.local = local;
    HttpServer server(options_.listen, page_handler(shared, options_));
    log_line(context.err, fmt::format("listening on {}:{}, local server {}, a cycle every {}", options_.listen.host,
                                      server.port(), local, format_duration(options_.interval)));
    // Under the lender, so that a stop closes the long-lived session with the cycle's.
    auto stoppable = std::make_shared<StoppableFactory>(context.keepers);
    auto lender = std::make_shared<LocalSessionLender>(*stoppable, local_address);
    std::promise<void> ended;
    auto cycles_ended = ended.get_future();
    std::thread cycles([options = options_, local, stoppable, lender, shared, &err = context.err,
                        ended = std::move(ended)]() mutable {
      cycle_loop(options, local, *lender, shared, err);
      ended.set_value();
    });
    while (!g_stop_requested) std::this_thread::sleep_for(milliseconds(50));
    return stop(context, server, *shared, std::move(cycles), cycles_ended, *stoppable);
  }

 private:
  // SIGTERM: within a second, the HTTP server is closed and every session is closed (the cycle's
  // round-trip node goes with its writer's session), which ends a cycle waiting on ZooKeeper. A
  // cycle still asking a four-letter word by then is left to its own deadline (it opens no session
  // any more) as the process exits.
  static int stop(const Context& context, HttpServer& server, Shared& shared, std::thread cycles,
                  std::future<void>& cycles_ended, StoppableFactory& sessions) {
    auto deadline = Clock::now() + milliseconds(900);
    shared.stopping = true;
    server.stop();
    bool closed = sessions.stop(deadline - milliseconds(300));
    if (cycles_ended.wait_until(deadline - milliseconds(200)) != std::future_status::ready) {
      log_line(context.err, "stopping: its sessions are closed; the cycle in progress is still asking a four-letter word");
      cycles.detach();
      return kExitHealthy;
    }
    cycles.join();
    log_line(context.err, closed ? "stopped" : "stopped (a session was still closing: the server expires it)");
    return kExitHealthy;
  }

  ServeOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace zkverify::verifier
