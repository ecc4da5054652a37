// `zkverify serve`: the readiness-probe sidecar. Every --interval the same check as `quorum` plus
// the local server's sync proof (verifier/sidecar/cycle), run by this command's thread; an HTTP
// server on the executor answers /livez, /readyz, /ensemble, /metrics and / from the last cycle
// (model/judge/sidecar_book, model/render/sidecar_pages). One log line per change, not per cycle.
// SIGTERM stops it within a second, closing its sessions.

#include <memory>
#include <mutex>
#include <ostream>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/judge/sidecar_book.hpp"
#include "probes/host.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/local_server.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/sidecar/cycle.hpp"
#include "verifier/sidecar/http_server.hpp"
#include "verifier/sidecar/session_lender.hpp"
#include "verifier/sidecar/stoppable_factory.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::milliseconds;

struct ServeOptions : EnsembleOptions {
  std::string local;                      // --local NAME; default: the host name
  ListenAddress listen{"0.0.0.0", 9181};  // --listen
  milliseconds interval{10000};           // --interval
  std::string ensemble;                   // --ensemble NAME: a label on every metric
};

// The book, shared by the cycles (this command's thread) and the pages (the HTTP server's strand).
struct GuardedBook {
  explicit GuardedBook(SidecarBook first) : book(std::move(first)) {}
  std::mutex mutex;
  SidecarBook book;
};

void log_line(std::ostream& err, const std::string& line) {
  err << fmt::format("{} zkverify serve: {}\n", iso8601(std::chrono::system_clock::now()), line) << std::flush;
}

HttpServer::Handler page_handler(const std::shared_ptr<GuardedBook>& shared) {
  return [shared](const Route& route) {
    std::lock_guard lock(shared->mutex);
    PageContext context{shared->book.alive(Clock::now()), std::chrono::system_clock::now()};
    return respond(route, shared->book.status(), context);
  };
}

class ServeCommand final : public Command {
 public:
  // quorum's words, no more: a cycle's verdict is quorum's, and every other word is one more
  // connection to each server per cycle (over TLS, one more handshake). One connection at a time:
  // with the long-lived session, the local server sees at most two from the sidecar.
  ServeCommand() {
    options_.verdict_words_only = true;
    options_.one_connection_at_a_time = true;
  }

  std::string_view name() const override { return "serve"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "serve",
        "Readiness sidecar: /readyz is 200 while the local server serves and is synced; also /livez, "
        "/ensemble, /metrics, /");
    add_servers_option(command, options_.servers);
    add_local_check_options(command, options_, options_.local);
    add_clients_option(command, options_.client_paths);
    command
        .add_option_function<std::string>(
            "--listen", [this](const std::string& text) { options_.listen = parse_listen(text); },
            "HOST:PORT to serve HTTP on (default 0.0.0.0:9181; :9181 is every address, IPv6 too; IPv6 as [::1]:9181)")
        ->type_name("HOST:PORT");
    add_duration_option(command, "--interval", options_.interval, "Time between cycles (default 10s)");
    add_duration_option(command, "--timeout", options_.timeout, "Deadline for one cycle (default 5s)");
    command
        .add_option_function<std::string>(
            "--ensemble", [this](const std::string& text) { options_.ensemble = parse_ensemble_name(text); },
            "The ensemble's name: the label ensemble=\"NAME\" on every metric, so that one Prometheus tells ensembles "
            "apart (default: no label)")
        ->type_name("NAME");
    return command;
  }

  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    auto local = choose_local(options_.servers, options_.local, probes::local_host_name());
    auto& stop = context.executor.stop();
    stop.install();
    auto shared = std::make_shared<GuardedBook>(
        SidecarBook(local, options_.interval, options_.timeout, Clock::now(), options_.ensemble));
    HttpServer server(context.executor, options_.listen, page_handler(shared));
    log_line(context.err, fmt::format("listening on {}:{}, local server {}, a cycle every {}", options_.listen.host,
                                      server.port(), local, format_duration(options_.interval)));
    // Under the lender, so that a stop closes the long-lived session with the cycle's.
    auto sessions = std::make_shared<StoppableFactory>(context.keepers);
    LocalSessionLender lender(*sessions, *std::ranges::find(options_.servers, local, &ServerAddress::name));
    // SIGTERM starts closing every session at once: an operation in flight answers `closing`, so
    // the cycle in progress ends now, and its round trip's node goes with its writer's session.
    probes::StopSubscription closing(&stop, [sessions](int, int) { sessions->stop(Clock::now()); });
    run_cycles(context, local, lender, *shared);
    return stop_serving(context, server, *sessions, lender);
  }

 private:
  // The cycles, until a stop: each one's result replaces the last, and its changes are logged.
  void run_cycles(const Context& context, const std::string& local, probes::KeeperFactory& sessions,
                  GuardedBook& shared) const {
    auto& stop = context.executor.stop();
    auto options = options_;
    options.abandoned_by_stop = true;  // a cycle asking a word of a stalled server must not hold up SIGTERM
    while (!stop.requested()) {
      auto started = Clock::now();
      renew_tls(context);
      auto result = run_cycle(options, local, context.executor, sessions, tls_client_of(context));
      if (stop.requested()) return;  // ended by the stop closing its sessions: says nothing of the servers
      std::vector<std::string> changes;
      Clock::time_point next;
      {
        std::lock_guard lock(shared.mutex);
        changes = shared.book.cycle_ended(std::move(result), Clock::now());
        next = shared.book.next_cycle(started);
      }
      for (const auto& line : changes) log_line(context.err, line);
      stop.wait_until(next);
    }
  }

  // The kubelet swaps a renewed Secret's files: the next connections use them, no restart.
  static void renew_tls(const Context& context) {
    if (!context.tls) return;
    auto renewal = context.tls->renew_if_changed();
    if (renewal.renewed) log_line(context.err, "TLS files changed: the next connections use them");
    if (!renewal.error.empty())
      log_line(context.err, "TLS files changed but cannot be used yet (the previous ones stay): " + renewal.error);
  }

  // After SIGTERM, within a second: the HTTP server closed, every session closed (or left to its
  // server's expiry after 600 ms).
  static int stop_serving(const Context& context, HttpServer& server, StoppableFactory& sessions,
                          LocalSessionLender& lender) {
    auto deadline = Clock::now() + milliseconds(600);
    server.stop();
    bool closed = sessions.stop(deadline);
    closed = lender.close(deadline) && closed;
    log_line(context.err, closed ? "stopped" : "stopped (a session was still closing: the server expires it)");
    return kExitHealthy;
  }

  ServeOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace zkverify::verifier
