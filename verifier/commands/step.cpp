// `zkverify step`: one manual step of a rolling upgrade, wrapped. Before: healthy and safe to restart
// NAME, or COMMAND is not run. During: the watch engine, and a poller timing NAME's downtime and the
// election. After: NAME serves and caught up, the ensemble is healthy for the stability window, the
// ledger holds, no session expired, no acknowledged write was lost. The restart itself is
// restart_step's, shared with roll.

#include <csignal>
#include <ostream>

#include <fmt/format.h>

#include "model/judge/watch_judge.hpp"
#include "model/render/json_text.hpp"
#include "model/render/report_view.hpp"
#include "model/render/step_view.hpp"
#include "model/render/watch_view.hpp"
#include "verifier/check/output.hpp"
#include "verifier/check/restart_step.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/commands/watch.hpp"

namespace zkverify::verifier {

namespace {

class StepCommand final : public Command {
 public:
  std::string_view name() const override { return "step"; }
  CLI::App& add_to(CLI::App& app) override;
  int run(const Context& context) override;

 private:
  // Before: healthy and safe to restart NAME; otherwise prints why and returns false.
  bool ready_to_restart(const Context& context, LedgerUse& ledger);
  // SIGINT/SIGTERM while COMMAND ran: COMMAND got it too; clean up at once and say what is known.
  int report_interrupted(const Context& context, probes::WatchEngine& engine, const StepRun& run);
  // --refuse-at-risk refused the leader's step before COMMAND: the check before, with the sessions at
  // risk among its findings, and why COMMAND did not run.
  int report_refused(const Context& context, const StepRun& run);
  void print_result(const Context& context, const Report& result, const StepRun& run, const WatchTotals& totals);

  StepPlan plan_;
  Report before_;                  // the check before the step
  ConnectionOptions connection_;   // --auth-file, --tls-*
  bool old_timeout_used_ = false;  // --timeout, step-timeout's deprecated name
  OutputFormat output_ = OutputFormat::text;
  WatchTuning tuning_;
};

CLI::App& StepCommand::add_to(CLI::App& app) {
  auto& command = *app.add_subcommand(
      "step", "Wrap one restart: check it is safe, run COMMAND with a watch running, wait until healthy, verify");
  add_servers_option(command, plan_.servers, &plan_.given_lists);
  add_admin_port_option(command, plan_.servers);  // its checks, and the sessions before a restart
  add_connection_options(command, connection_);
  command.add_option("--restart", plan_.restart, "The server COMMAND restarts, as named in --servers")
      ->type_name("NAME")
      ->required();
  add_step_timeout_options(command, plan_.timeout, old_timeout_used_);
  auto* state = add_state_option(command, plan_.state_file, "Ledger file, as for quorum --state");
  add_refuse_at_risk_option(command, plan_.refuse_at_risk, state);
  add_to_option(command, plan_.returns_with, &plan_.returns_list);
  add_output_option(command, output_);
  add_namespace_option(command, plan_.namespace_path);
  add_clients_option(command, plan_.client_paths);
  add_watch_tuning_options(command, tuning_);
  command.add_option("COMMAND", plan_.command, "After --: the command that restarts the server")
      ->type_name("")
      ->expected(-1);
  command.final_callback([this] {
    require_listed(plan_.servers, plan_.restart, "--restart ");
    if (plan_.command.empty()) throw_usage("no COMMAND after --: what restarts the server?");
    plan_.command_stdout_to_stderr = output_ == OutputFormat::json;
  });
  return command;
}

bool StepCommand::ready_to_restart(const Context& context, LedgerUse& ledger) {
  auto decision = decide_restart(plan_, ledger, context, [&](const Report&, const Ledger& next) {
    plan_.last_election = next.last_election;
    return std::optional(plan_.restart);
  });
  plan_.leader_before = decision.report.leader;
  plan_.version_before = version_of(decision.report, plan_.restart);
  plan_.clients_before = decision.report.clients;
  before_ = decision.report;
  if (decision.go()) return true;
  context.out << render(decision.report, output_);
  // With --output json, stdout stays one JSON document: the refusal in words goes to stderr.
  (output_ == OutputFormat::json ? context.err : context.out)
      << fmt::format("step {}: {}; COMMAND not run\n", plan_.restart,
                     decision.report.verdict != Verdict::healthy
                         ? fmt::format("the ensemble is {} before the step", to_string(decision.report.verdict))
                         : "not safe to restart: " + decision.safety.reason);
  return false;
}

int StepCommand::report_interrupted(const Context& context, probes::WatchEngine& engine, const StepRun& run) {
  auto message = fmt::format(
      "step {}: interrupted by {} while COMMAND ran (passed on to it; it exited {}); the "
      "ensemble was not checked after it: run zkverify quorum",
      plan_.restart, context.executor.stop().signal() == SIGINT ? "SIGINT" : "SIGTERM", run.outcome.status);
  if (output_ == OutputFormat::json)
    context.out << json_text({{"verdict", "degraded"},
                              {"interrupted", true},
                              {"summary", message},
                              {"step", step_json(plan_.restart, run.outcome.status, run.timeline, message)},
                              {"watch", to_json(engine.totals())}})
                << "\n";
  else context.out << "\n" + message + "\n";
  return kExitDegraded;
}

int StepCommand::report_refused(const Context& context, const StepRun& run) {
  auto report = before_;
  report.findings.push_back(*run.refused);
  finalize(report);
  context.out << render(report, output_);
  (output_ == OutputFormat::json ? context.err : context.out) << fmt::format(
      "step {}: not safe to restart: {} (--refuse-at-risk); COMMAND not run\n", plan_.restart, kSessionsAtRisk);
  return kExitDegraded;
}

void StepCommand::print_result(const Context& context, const Report& result, const StepRun& run,
                               const WatchTotals& totals) {
  auto summary =
      render_step_summary(plan_.restart, run.outcome.status, run.timeline, totals.longest_unavailable, totals);
  if (output_ == OutputFormat::json) {
    auto json = to_json(result);
    json["step"] = step_json(plan_.restart, run.outcome.status, run.timeline, summary);
    json["watch"] = to_json(totals);
    context.out << json_text(json) << "\n";
  } else {
    context.out << fmt::format("\n{}\n{}\n", render_text(result), summary);  // one piece: see output.hpp
  }
}

int StepCommand::run(const Context& given) {
  AuthenticatedContext authenticated(connection_, given);
  const auto& context = authenticated.context();
  if (old_timeout_used_) warn_old_step_timeout(context.err, name());
  plan_.interrupt_at = 1;
  context.executor.stop().install();  // from here a signal is passed on to COMMAND, or keeps it from starting
  LedgerUse ledger{plan_.state_file, false};
  if (!ready_to_restart(context, ledger)) return kExitDegraded;

  probes::WatchEngine engine(watch_settings(plan_.servers, plan_.namespace_path, tuning_, plan_.client_paths),
                             context.executor, context.keepers,
                             [say = context.output->sayer(), output = output_](const WatchEvent& event) {
                               if (output == OutputFormat::json) return;  // one JSON object at the end
                               say(Channel::out, render_event(event, OutputFormat::text));
                             });
  if (auto error = engine.start(Clock::now() + plan_.check_timeout)) {
    context.err << "zkverify step: the watch could not start: " << *error << "; COMMAND not run\n";
    forget_approval(plan_, plan_.restart);
    return kExitDegraded;
  }
  auto run = run_restart(plan_, ledger, context, engine);
  if (run.interrupted) engine.stop_quickly(std::chrono::milliseconds(300));
  else engine.stop();
  if (run.refused) return report_refused(context, run);
  if (run.interrupted && run.report.servers.empty()) return report_interrupted(context, engine, run);

  auto facts = step_facts(plan_, run);
  facts.clients_seen = seen_during(engine.clients().absences, run);
  auto own = step_findings(facts);
  auto watch = judge_watch(engine.totals(), tuning_.max_unavailable);
  Report result = run.report;  // the last check, with the watch's and the step's findings
  result.findings.insert(result.findings.end(), watch.begin(), watch.end());
  result.findings.insert(result.findings.end(), own.begin(), own.end());
  finalize(result);
  print_result(context, result, run, engine.totals());
  return exit_code(step_verdict(run.report, own, watch));  // roll's rule too
}

}  // namespace

std::unique_ptr<Command> make_step_command() { return std::make_unique<StepCommand>(); }

}  // namespace zkverify::verifier
