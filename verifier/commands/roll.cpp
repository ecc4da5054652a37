// `zkverify roll`: the whole rolling restart in one command. Each server is one step (restart_step,
// exactly as `zkverify step` runs it), in `order`'s order recomputed before each step (down first,
// the leader last), with one watch across the whole roll. The first failed step stops the roll; the
// ledger's restart round remembers what is done, so the same command resumes.

#include <ostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/time_text.hpp"
#include "model/judge/roll.hpp"
#include "model/judge/watch_judge.hpp"
#include "model/render/json_text.hpp"
#include "model/render/report_view.hpp"
#include "model/render/roll_view.hpp"
#include "model/render/step_view.hpp"
#include "model/render/watch_view.hpp"
#include "verifier/check/output.hpp"
#include "verifier/check/restart_step.hpp"
#include "verifier/commands/authenticated.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"
#include "verifier/commands/options.hpp"
#include "verifier/commands/watch.hpp"
#include "verifier/store/ledger_file.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::milliseconds;

// COMMAND for one server: every "{}" in its arguments replaced by the server's name.
std::vector<std::string> command_for(const std::vector<std::string>& command, const std::string& server) {
  std::vector<std::string> args;
  for (auto arg : command) {
    for (auto at = arg.find("{}"); at != std::string::npos; at = arg.find("{}", at + server.size()))
      arg.replace(at, 2, server);
    args.push_back(std::move(arg));
  }
  return args;
}

// A step as the roll's record keeps it: times as milliseconds since the roll started.
RollStep record_of(const std::string& server, const StepRun& run, Clock::time_point roll_started) {
  auto ms = [&](Clock::time_point at) {
    return static_cast<long>(std::chrono::duration_cast<milliseconds>(at - roll_started).count());
  };
  auto window = [&](const std::optional<StepTimeline::Span>& span) -> std::optional<Window> {
    if (!span) return std::nullopt;
    return Window{ms(span->first), ms(span->second)};
  };
  RollStep step;
  step.server = server;
  step.command_status = run.outcome.status;
  step.span = {ms(run.started), ms(run.ended)};
  step.down = window(run.timeline.down_window);
  step.leader_before = run.timeline.leader_before;
  step.leader_after = run.timeline.leader_after;
  step.leaderless = window(run.timeline.leaderless_window);
  step.version_after = version_of(run.report, server);
  step.verdict = run.report.verdict;
  if (step.verdict != Verdict::healthy) step.check_findings = run.report.findings;
  return step;
}

ClientAbsenceWindow absence_on_roll_clock(const RegistrationAbsence& absence, Clock::time_point roll_started) {
  auto ms = [&](Clock::time_point at) {
    return static_cast<long>(std::chrono::duration_cast<milliseconds>(at - roll_started).count());
  };
  return {absence.path, ms(absence.gone.steady), absence.back ? std::optional(ms(absence.back->steady)) : std::nullopt};
}

class RollCommand final : public Command {
 public:
  std::string_view name() const override { return "roll"; }
  CLI::App& add_to(CLI::App& app) override;
  int run(const Context& context) override;

 private:
  // The restart round as the roll starts: those servers are skipped.
  std::set<std::string> round_at_start() const;
  // The watch's settings: its servers in the roll's order, failing over backwards (watch_engine.hpp).
  probes::WatchSettings watch_in_roll_order(const Context& context) const;
  int dry_run(const Context& context, const std::set<std::string>& skipped);
  // Steps until every server is done, one fails, or a stop signal; fills `roll_`.
  void run_steps(const Context& context, LedgerUse& ledger, probes::WatchEngine& engine);
  // One step; false when the roll must stop after it.
  bool run_one(const Context& context, LedgerUse& ledger, probes::WatchEngine& engine, const std::string& server);
  int finish(const Context& context, probes::WatchEngine& engine);

  StepPlan plan_;                  // restart and command are set per step
  ConnectionOptions connection_;   // --auth-file, --tls-*
  bool old_timeout_used_ = false;  // --timeout, step-timeout's deprecated name
  OutputFormat output_ = OutputFormat::text;
  WatchTuning tuning_;
  milliseconds pause_{0};
  bool dry_run_ = false;
  std::optional<std::string> html_report_;
  RollRecord roll_;
  Clock::time_point started_;
};

CLI::App& RollCommand::add_to(CLI::App& app) {
  auto& command = *app.add_subcommand(
      "roll",
      "Restart every server in turn, each as one verified step, the leader last, with one watch across the roll");
  add_servers_option(command, plan_.servers, &plan_.given_lists);
  add_admin_port_option(command, plan_.servers);  // its checks, and the sessions before a restart
  add_connection_options(command, connection_);
  add_state_option(command, plan_.state_file, "Ledger file (required): its restart round lets a stopped roll resume")
      ->required();
  add_refuse_at_risk_option(command, plan_.refuse_at_risk, nullptr);
  add_step_timeout_options(command, plan_.timeout, old_timeout_used_);
  add_duration_option(command, "--pause", pause_, "Wait between steps (default 0)");
  add_to_option(command, plan_.returns_with, &plan_.returns_list);
  command.add_flag("--dry-run", dry_run_, "Print the plan and the pre-checks; run nothing");
  add_output_option(command, output_);
  add_output_file_option(command, "--report", html_report_,
                         "Write an HTML report of the roll (a timeline and the tables) to FILE");
  add_namespace_option(command, plan_.namespace_path);
  add_clients_option(command, plan_.client_paths);
  add_watch_tuning_options(command, tuning_);
  command.add_option("COMMAND", plan_.command, "After --: restarts one server; {} is replaced by its name")
      ->type_name("")
      ->expected(-1);
  command.final_callback([this] {
    if (plan_.command.empty()) throw_usage("no COMMAND after --: what restarts a server? ({} is its name)");
    plan_.command_stdout_to_stderr = output_ == OutputFormat::json;
  });
  return command;
}

std::set<std::string> RollCommand::round_at_start() const {
  auto ledger = read_ledger(StateFile(*plan_.state_file, plan_.check_timeout));
  return ledger ? ledger->restarted : std::set<std::string>{};
}

probes::WatchSettings RollCommand::watch_in_roll_order(const Context& context) const {
  auto order =
      restart_order(judge(gather(check_options(plan_), context.executor, context.keepers, tls_client_of(context))));
  std::vector<ServerAddress> servers;
  for (const auto& step : order) servers.push_back(*std::ranges::find(plan_.servers, step.name, &ServerAddress::name));
  auto settings = watch_settings(servers, plan_.namespace_path, tuning_, plan_.client_paths);
  settings.fail_over_backwards = true;
  settings.keep_events = true;  // the report's: engine.events() once stopped
  return settings;
}

int RollCommand::dry_run(const Context& context, const std::set<std::string>& skipped) {
  auto report = judge(gather(check_options(plan_), context.executor, context.keepers, tls_client_of(context)));
  auto plan = plan_roll(report, skipped, plan_.returns_with);
  context.out << render_roll_plan(report, plan, output_);
  return report.verdict == Verdict::healthy && plan.all_safe() ? kExitHealthy : kExitDegraded;
}

bool RollCommand::run_one(const Context& context, LedgerUse& ledger, probes::WatchEngine& engine,
                          const std::string& server) {
  auto command = plan_.command;
  plan_.restart = server;
  plan_.command = command_for(command, server);
  engine.take_longest_unavailable();  // the step's figure starts now
  auto run = run_restart(plan_, ledger, context, engine);
  if (run.refused) {  // COMMAND did not run: the roll stops before this server, as at a check that refused it
    plan_.command = std::move(command);
    roll_.refused = RollRefusal{server, fmt::format("not safe to restart: {} (--refuse-at-risk)", kSessionsAtRisk)};
    roll_.last_report.findings.push_back(*run.refused);  // the sessions, named
    finalize(roll_.last_report);
    return false;
  }
  hold_returned_list(plan_.given_lists, plan_.returns_list, server);  // the next steps see it on --to's list
  auto step = record_of(server, run, started_);
  step.version_before = plan_.version_before;  // the check that chose it
  step.longest_unavailable = engine.take_longest_unavailable();
  auto facts = step_facts(plan_, run);
  facts.clients_seen = seen_during(engine.clients().absences, run);
  for (const auto& seen : facts.clients_seen) step.client_absences.push_back(absence_on_roll_clock(seen, started_));
  step.findings = step_findings(facts);
  if (plan_.clients_before && run.report.clients)
    step.client_changes = compare_registrations(*plan_.clients_before, *run.report.clients);
  plan_.command = std::move(command);
  auto totals = engine.totals();
  step.summary = render_step_summary(server, run.outcome.status, run.timeline, step.longest_unavailable, totals);
  bool ok = step_verdict(run.report, step.findings, judge_watch(totals, tuning_.max_unavailable)) == Verdict::healthy;
  if (output_ == OutputFormat::text) context.out << step.summary + "\n";
  roll_.steps.push_back(std::move(step));
  return ok;
}

void RollCommand::run_steps(const Context& context, LedgerUse& ledger, probes::WatchEngine& engine) {
  auto& stop = context.executor.stop();
  std::set<std::string> done = roll_.skipped;
  while (true) {
    if (stop.requested()) {
      roll_.stopped_by_signal = true;
      return;
    }
    auto decision = decide_restart(plan_, ledger, context, [&](const Report& report, const Ledger& next) {
      plan_.last_election = next.last_election;
      return next_to_restart(report, done, next.restarted);
    });
    roll_.last_report = decision.report;
    plan_.leader_before = decision.report.leader;
    if (decision.server) plan_.version_before = version_of(decision.report, *decision.server);
    plan_.clients_before = decision.report.clients;
    if (!decision.server) {
      roll_.complete = true;
      return;
    }
    if (!decision.go()) {
      roll_.refused =
          RollRefusal{*decision.server, decision.report.verdict != Verdict::healthy
                                            ? fmt::format("the ensemble is {}", to_string(decision.report.verdict))
                                            : "not safe to restart: " + decision.safety.reason};
      return;
    }
    if (stop.requested()) {  // came while the check ran: the approval it just recorded is not used
      forget_approval(plan_, *decision.server);
      roll_.stopped_by_signal = true;
      return;
    }
    if (!run_one(context, ledger, engine, *decision.server)) return;
    done.insert(*decision.server);
    stop.wait_until(Clock::now() + pause_);  // a signal ends the pause
  }
}

int RollCommand::finish(const Context& context, probes::WatchEngine& engine) {
  if (context.executor.stop().requested(2)) engine.stop_quickly(milliseconds(300));
  else engine.stop();
  for (auto& event : engine.events()) roll_.events.push_back(on_roll_clock(std::move(event), started_));
  roll_.duration_ms = static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - started_).count());
  roll_.totals = engine.totals();
  roll_.watch_findings = judge_watch(roll_.totals, tuning_.max_unavailable);
  context.out << render_roll(roll_, output_);
  if (html_report_) {
    write_file_atomically(*html_report_, render_roll_html(roll_));
    context.err << "zkverify roll: report written to " << *html_report_ << "\n";
  }
  return exit_code(roll_verdict(roll_));
}

int RollCommand::run(const Context& given) {
  AuthenticatedContext authenticated(connection_, given);
  const auto& context = authenticated.context();
  if (old_timeout_used_) warn_old_step_timeout(context.err, name());
  plan_.interrupt_at = 2;
  context.executor.stop().install();
  for (const auto& server : plan_.servers) roll_.servers.push_back(server.name);
  roll_.skipped = round_at_start();
  for (const auto& server : roll_.skipped) hold_returned_list(plan_.given_lists, plan_.returns_list, server);
  if (dry_run_) return dry_run(context, roll_.skipped);
  LedgerUse ledger{plan_.state_file, false};
  started_ = Clock::now();
  // The sink owns what it uses (the output's writer, the format): it may outlive a stop.
  probes::WatchEngine engine(watch_in_roll_order(context), context.executor, context.keepers,
                             [say = context.output->sayer(), output = output_](const WatchEvent& event) {
                               if (output == OutputFormat::text) say(Channel::out, render_event(event, output));
                             });
  if (auto error = engine.start(Clock::now() + plan_.check_timeout)) {
    context.err << "zkverify roll: the watch could not start: " << *error << "; nothing restarted\n";
    return kExitDegraded;
  }
  run_steps(context, ledger, engine);
  return finish(context, engine);
}

}  // namespace

std::unique_ptr<Command> make_roll_command() { return std::make_unique<RollCommand>(); }

}  // namespace zkverify::verifier
