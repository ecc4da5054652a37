// `zkverify smoke`: the CI smoke check. Optionally waits for the ensemble (every server serving, one
// leader), judges it as `quorum` does, then runs named session cases through the serving servers
// under a run path of its own, removes it, and reports the cases as text or JSON and as JUnit XML.

#include <algorithm>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/judge/smoke_judge.hpp"
#include "model/render/junit.hpp"
#include "model/render/smoke_view.hpp"
#include "probes/host.hpp"
#include "probes/smoke_cases.hpp"
#include "verifier/check/ensemble_check.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/commands/watch.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::milliseconds;

struct SmokeOptions : EnsembleOptions {
  std::optional<milliseconds> wait;         // --wait D
  std::optional<std::string> junit;         // --junit FILE
  int ops = 10;                             // --ops N
  std::optional<milliseconds> max_latency;  // --max-latency D
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int serving_count(const Report& report) { return static_cast<int>(serving_servers(report).size()); }

// The ensemble's facts and judgement, without writing (the cases write).
Report look(const SmokeOptions& options, const Context& context) {
  auto probing = static_cast<EnsembleOptions>(options);
  probing.no_write = true;
  return judge(gather(probing, context.executor, context.keepers, tls_client_of(context)));
}

// The serving servers, in list order, as the cases' plan.
probes::SmokePlan plan_for(const SmokeOptions& options, const Report& report, probes::StopSignals& stop) {
  probes::SmokePlan plan;
  auto serving = serving_servers(report);
  for (const auto& server : options.servers)
    if (std::ranges::find(serving, server.name) != serving.end()) plan.servers.push_back(server);
  plan.leader = report.leader.value_or("");
  plan.namespace_path = options.namespace_path;
  plan.run_path = probes::smoke_run_path(options.namespace_path);
  plan.ops = options.ops;
  plan.client_paths = options.client_paths;
  plan.case_timeout = options.timeout;
  plan.stop_requested = [&stop] { return stop.requested(); };
  plan.stop_signals = &stop;
  return plan;
}

std::vector<std::string> names_of(const std::vector<ServerAddress>& servers) {
  std::vector<std::string> names;
  for (const auto& server : servers) names.push_back(server.name);
  return names;
}

class SmokeCommand final : public Command {
 public:
  std::string_view name() const override { return "smoke"; }

  CLI::App& add_to(CLI::App& app) override {
    auto& command = *app.add_subcommand(
        "smoke",
        "CI smoke check: named cases (JUnit XML with --junit); exit 0 all passed, 1 a case failed, 2 unreachable");
    add_servers_option(command, options_.servers);
    add_connection_options(command, options_.connection);
    add_admin_port_option(command, options_.servers);
    options_.timeout = milliseconds(10000);
    add_duration_option(command, "--timeout", options_.timeout, "Deadline of each case, and of probing (default 10s)");
    add_duration_option(command, "--wait", options_.wait,
                        "First wait up to this long for every server to serve and one to lead (exit 2 after)");
    add_output_file_option(command, "--junit", options_.junit, "Write the cases as JUnit XML to FILE (atomically)");
    add_output_option(command, options_.output);
    add_namespace_option(command, options_.namespace_path);
    add_clients_option(command, options_.client_paths);
    command.add_option_function<int>(
        "--ops",
        [this](int ops) {
          if (ops < 1 || ops > 100000) throw_usage(fmt::format("--ops {}: use 1 to 100000", ops));
          options_.ops = ops;
        },
        "Operations of each kind (create, set, get, delete) per server for latency (default 10)");
    add_duration_option(command, "--max-latency", options_.max_latency,
                        "Fail a latency case when an operation's p99 exceeds this (default: no limit)");
    return command;
  }

  int run(const Context& given) override {
    AuthenticatedContext authenticated(options_.connection, given);
    const auto& context = authenticated.context();
    context.executor.stop().install();
    auto started = Clock::now();
    auto wall = std::chrono::system_clock::now();
    auto [report, was_ready] =
        options_.wait ? wait_for_ensemble(context, started) : std::pair{look(options_, context), true};
    std::vector<CaseResult> cases;
    bool unreachable = !was_ready;
    if (!was_ready) {
      cases = judge_ensemble(report);
      auto not_run =
          sessions_not_run(names_of(options_.servers),
                           fmt::format("the ensemble was not ready within --wait {}", format_duration(*options_.wait)));
      cases.insert(cases.end(), not_run.begin(), not_run.end());
    } else {
      cases = judge_ensemble(report);
      unreachable = serving_count(report) == 0;
      auto sessions = session_cases(report, context);
      cases.insert(cases.end(), sessions.begin(), sessions.end());
    }
    auto seconds = seconds_since(started);
    context.out << (options_.output == OutputFormat::json ? render_smoke_json(cases, seconds)
                                                          : render_smoke_text(cases, seconds))
                << std::flush;
    if (options_.junit)
      write_file_atomically(*options_.junit, render_junit({"zkverify smoke", "zkverify.smoke", iso8601(wall),
                                                           probes::local_host_name(), seconds, cases}));
    if (unreachable) return kExitCritical;
    // A case skipped because it cannot apply (one server: no session move) fails nothing; an
    // interrupted run verified less than it should have.
    return count(cases, CaseOutcome::failed) == 0 && !context.executor.stop().requested() ? kExitHealthy
                                                                                          : kExitDegraded;
  }

 private:
  std::vector<CaseResult> session_cases(const Report& report, const Context& context) const {
    auto plan = plan_for(options_, report, context.executor.stop());
    if (plan.servers.empty()) return sessions_not_run(names_of(options_.servers), "no listed server is serving");
    auto seen = probes::run_smoke(plan, context.keepers);
    return judge_sessions(seen, {options_.max_latency});
  }

  // Probes once a second until every server serves and one leads, or --wait ran out or a stop was
  // requested; the last report, and whether it was ready. One progress line per attempt on stderr.
  std::pair<Report, bool> wait_for_ensemble(const Context& context, Clock::time_point started) const {
    auto give_up = started + *options_.wait;
    for (;;) {
      auto attempt = Clock::now();
      auto probing = options_;  // a probe ends by the end of --wait, whatever --timeout says
      probing.timeout =
          std::clamp(std::chrono::duration_cast<milliseconds>(give_up - attempt), milliseconds(200), options_.timeout);
      auto report = look(probing, context);
      if (ready_for_smoke(report)) return {std::move(report), true};
      context.err << fmt::format("waiting for the ensemble: {}/{} serving, {} ({:.1f}s)\n", serving_count(report),
                                 report.servers.size(), report.leader ? "leader " + *report.leader : "no leader yet",
                                 seconds_since(started))
                  << std::flush;
      auto next = std::min(attempt + std::chrono::seconds(1), give_up);  // the whole --wait, as quorum's
      if (Clock::now() >= give_up || context.executor.stop().requested()) {
        context.err << fmt::format("zkverify smoke: --wait {} ran out: the ensemble is not ready\n",
                                   format_duration(*options_.wait));
        return {std::move(report), false};
      }
      context.executor.stop().wait_until(next);  // a stop ends the wait
    }
  }

  SmokeOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_smoke_command() { return std::make_unique<SmokeCommand>(); }

}  // namespace zkverify::verifier
