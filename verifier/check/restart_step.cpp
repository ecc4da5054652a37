#include "verifier/check/restart_step.hpp"

#include <csignal>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/restart_round.hpp"
#include "model/judge/server_side.hpp"
#include "model/parse/parsers.hpp"
#include "probes/four_letter.hpp"
#include "probes/restart_poller.hpp"
#include "verifier/check/output.hpp"
#include "verifier/store/ledger_file.hpp"

namespace zkverify::verifier {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

struct Recovery {
  Report report;
  int healthy_streak = 0;
  Clock::time_point give_up{};  // the step's deadline
};

// Checks until healthy plan.stable times in a row, data loss, an interruption or plan.timeout.
Recovery wait_for_recovery(const StepPlan& plan, LedgerUse& ledger, const Context& context,
                           probes::RestartPoller& poller) {
  auto give_up = Clock::now() + plan.timeout;
  auto check = check_options_after_restart(plan);  // the checks that count come after the restart
  Recovery recovery;
  recovery.give_up = give_up;
  bool said_waiting = false;
  while (true) {
    {
      probes::RestartPoller::Pause exclusive(poller);
      recovery.report = check_and_record(check, ledger, context);
    }
    // Healthy checks count only once the restart was seen: before it, the old process answers.
    bool restart_seen = poller.timeline().restart_seen;
    if (!restart_seen && !said_waiting) {
      context.err << "zkverify: waiting to see " << plan.restart
                  << " restart: checks count once it was seen down or its srvr Received count fell\n";
      said_waiting = true;
    }
    bool counts = recovery.report.verdict == Verdict::healthy && restart_seen;
    recovery.healthy_streak = counts ? recovery.healthy_streak + 1 : 0;
    if (recovery.healthy_streak >= plan.stable || Clock::now() + plan.interval >= give_up) break;
    if (has_finding(recovery.report.findings, FindingCode::data_loss)) break;
    auto& stop = context.executor.stop();
    if (stop.wait_until(Clock::now() + plan.interval, plan.interrupt_at)) break;  // clean up, report what was seen
  }
  return recovery;
}

ChildOutcome run_command(const StepPlan& plan, const Context& context) {
  context.err << fmt::format("zkverify: {}: running: {}\n", plan.restart, fmt::join(plan.command, " "));
  // COMMAND writes to the same descriptors: what was said before it starts is out first.
  if (context.output) context.output->written(Clock::now() + std::chrono::seconds(1));
  ChildLimits limits;
  limits.deadline = Clock::now() + plan.timeout;
  limits.stdout_to_stderr = plan.command_stdout_to_stderr;
  auto& stop = context.executor.stop();
  auto outcome = run_child(context.executor, plan.command, limits, stop, plan.interrupt_at);
  if (!outcome.spawn_error.empty()) context.err << "zkverify: " << outcome.spawn_error << "\n";
  if (outcome.timed_out)
    context.err << fmt::format("zkverify: {}: COMMAND was still running after {}: terminated (exit {})\n", plan.restart,
                               format_duration(plan.timeout), outcome.status);
  else if (!stop.requested(plan.interrupt_at))
    context.err << fmt::format("zkverify: {}: command exited {}; waiting up to {} for {} and the ensemble\n",
                               plan.restart, outcome.status, format_duration(plan.timeout), plan.restart);
  return outcome;
}

void record_outcome(const StepPlan& plan, const StepRun& run, const Context& context) {
  if (!plan.state_file) return;
  auto row = std::ranges::find(run.report.servers, plan.restart, &ServerRow::name);
  bool back = row != run.report.servers.end() && is_serving(row->state);
  bool done =
      run.outcome.status == 0 && !run.outcome.timed_out && !run.interrupted && back && run.timeline.restart_seen;
  // After an interruption the lock is waited for only briefly: the step must end within a second.
  auto wait = run.interrupted ? milliseconds(300) : plan.check_timeout;
  try {
    change_ledger(*plan.state_file, wait, iso_now(), [&](Ledger& ledger) {
      if (done) record_restarted(ledger, plan.restart, run.report.servers);
      else ledger.in_flight.erase(plan.restart);
      const auto& seen = run.timeline;
      if (seen.leader_before && seen.leader_after && *seen.leader_before != *seen.leader_after &&
          seen.longest_leaderless.count() > 0)
        ledger.last_election = Election{seen.longest_leaderless.count(), plan.restart, iso_now()};
    });
  } catch (const Error& error) {  // the step's report still matters more than this record
    context.err << "zkverify: " << plan.restart << ": the ledger was not updated after the step: " << error.what()
                << "\n";
  }
}

// `server`'s cons, asked with the poller paused and again after an empty reply (the server's answer
// to a host over maxClientCnxns, which the clients' own connections count towards), for at most two
// seconds, then of its AdminServer (--admin-port); why not, when neither answers with a list.
Reply<ConsFacts> ask_cons(const StepPlan& plan, const Context& context, probes::RestartPoller& poller,
                          const ServerAddress& server) {
  probes::RestartPoller::Pause exclusive(poller);
  probes::ProbeLimits limits;
  limits.deadline = Clock::now() + std::min(plan.check_timeout, milliseconds(2000));
  limits.tls = tls_client_of(context);
  auto cons = parse_cons(probes::ask_word(context.executor, server, "cons", limits).reply);
  auto& stop = context.executor.stop();
  while (cons.error == ProbeError::malformed && cons.detail == kClosedWithoutReply &&
         !stop.wait_until(std::min(limits.deadline, Clock::now() + milliseconds(300)), plan.interrupt_at) &&
         Clock::now() < limits.deadline)
    cons = parse_cons(probes::ask_word(context.executor, server, "cons", limits).reply);
  // cons not whitelisted (kubernetes-kafka's "ruok" alone): the AdminServer lists the same (3.5+).
  if (!cons.ok() && server.admin_port && !stop.requested(plan.interrupt_at)) {
    limits.deadline = Clock::now() + std::min(plan.check_timeout, milliseconds(2000));
    auto listed = parse_admin_connections(probes::ask_admin(context.executor, server, "connections", limits).reply);
    if (listed.ok()) return listed;
  }
  return cons;
}

// --clients: the sessions the server about to restart holds (cons, where whitelisted), said before
// COMMAND: which clients must fail over, and within what timeout. None when it never answers.
std::optional<ConsFacts> sessions_on_restarted(const StepPlan& plan, const Context& context,
                                               probes::RestartPoller& poller) {
  auto server = std::ranges::find(plan.servers, plan.restart, &ServerAddress::name);
  if (!plan.clients_before || server == plan.servers.end()) return std::nullopt;
  auto cons = ask_cons(plan, context, poller, *server);
  if (!cons.ok()) {
    context.err << fmt::format("zkverify: {}: cons gave no list of its sessions ({}): whose it holds is not known\n",
                               plan.restart, cons.detail.empty() ? to_string(cons.error) : cons.detail);
    return std::nullopt;
  }
  if (auto held = clients_on_server(*plan.clients_before, cons.facts, plan.restart))
    context.err << "zkverify: " << held->message << "\n";
  return cons.facts;
}

// Before the leader's step, when the ledger saw an election: every server's sessions (cons, where it
// answers; the leader's own as `on_leader` already has them), whose timeouts the election's length
// is weighed against; said before COMMAND.
std::vector<ConsFacts> sessions_before_election(const StepPlan& plan, const Context& context,
                                                probes::RestartPoller& poller,
                                                const std::optional<ConsFacts>& on_leader) {
  std::vector<ConsFacts> listed;
  if (!plan.last_election || plan.leader_before != plan.restart) return listed;
  if (on_leader) listed.push_back(*on_leader);
  for (const auto& server : plan.servers)
    if (!on_leader || server.name != plan.restart)
      if (auto cons = ask_cons(plan, context, poller, server); cons.ok()) listed.push_back(std::move(cons.facts));
  if (auto risk = election_risk(plan.restart, plan.last_election, listed, plan.clients_before))
    context.err << "zkverify: " << risk->message << "\n";
  return listed;
}

// The server whose mntr counts the ephemerals around a step: the leader before it, unless that is
// the one restarting, else the first other listed server.
std::string ephemerals_counter(const StepPlan& plan) {
  if (plan.leader_before && *plan.leader_before != plan.restart) return *plan.leader_before;
  for (const auto& server : plan.servers)
    if (server.name != plan.restart) return server.name;
  return "";
}

// mntr's count of the whole tree's ephemerals on `name`, asked with the poller paused (no check's
// probe node is in flight then, and the count is the clients' and the watch's); none when mntr is
// refused or the server does not serve.
std::optional<std::int64_t> ephemerals_on(const StepPlan& plan, const Context& context, probes::RestartPoller& poller,
                                          const std::string& name) {
  auto server = std::ranges::find(plan.servers, name, &ServerAddress::name);
  if (server == plan.servers.end()) return std::nullopt;
  probes::RestartPoller::Pause exclusive(poller);
  probes::ProbeLimits limits;
  limits.deadline = Clock::now() + std::min(plan.check_timeout, milliseconds(2000));
  limits.tls = tls_client_of(context);
  auto mntr = parse_mntr(probes::ask_word(context.executor, *server, "mntr", limits).reply);
  return mntr.ok() ? mntr.facts.ephemerals : std::nullopt;
}

// --clients: registrations gone at the last check get until the step's deadline to come back (a
// client whose session expired registers again once it reaches a server), as the step's watch
// follows them (no session of its own). What is still missing then is gone; what came back is
// compared as the step's last look.
void await_gone_clients(const StepPlan& plan, StepRun& run, const Context& context, Clock::time_point give_up,
                        probes::WatchEngine& watch) {
  if (!plan.clients_before || !run.report.clients) return;
  std::vector<std::string> gone, names;
  for (const auto& delta : compare_registrations(*plan.clients_before, *run.report.clients))
    if (delta.change == RegistrationChange::gone) {
      gone.push_back(delta.path);
      names.push_back(client_name(delta.path));
    }
  auto left = duration_cast<milliseconds>(give_up - Clock::now());
  if (gone.empty() || left <= milliseconds(0)) return;
  context.err << fmt::format("zkverify: {}: waiting up to {} for {} to register again\n", plan.restart,
                             format_duration(left), fmt::join(names, ", "));
  auto began = Clock::now();
  auto last = watch.await_registrations(gone, give_up, &context.executor.stop(), plan.interrupt_at);
  // The watch's reads of each path replace the check's where it read them.
  remember_client_reads(*run.report.clients, last);
  auto still = std::ranges::count_if(compare_registrations(*plan.clients_before, *run.report.clients),
                                     [](const auto& delta) { return delta.change == RegistrationChange::gone; });
  context.err << fmt::format("zkverify: {}: {} of {} registered again after {}\n", plan.restart,
                             std::ssize(gone) - still, gone.size(),
                             format_duration(duration_cast<milliseconds>(Clock::now() - began)));
}

}  // namespace

EnsembleOptions check_options(const StepPlan& plan) {
  EnsembleOptions check;
  check.servers = plan.servers;
  check.timeout = plan.check_timeout;
  check.namespace_path = plan.namespace_path;
  check.client_paths = plan.client_paths;
  check.given_lists = plan.given_lists;
  return check;
}

EnsembleOptions check_options_after_restart(const StepPlan& plan) {
  auto check = check_options(plan);
  hold_returned_list(check.given_lists, plan.returns_list, plan.restart);
  return check;
}

void hold_returned_list(std::map<std::string, ConfFacts>& given_lists, const std::optional<ConfFacts>& returns_list,
                        const std::string& server) {
  auto held = given_lists.find(server);
  if (held != given_lists.end() && returns_list) held->second = *returns_list;
}

StepDecision decide_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context,
                            const ServerChooser& choose) {
  StepDecision decision;
  decision.report = check_and_record(check_options(plan), ledger, context, [&](const Report& report, Ledger& next) {
    decision.server = choose(report, next);
    if (!decision.server) return;
    auto now = std::chrono::system_clock::now();
    decision.safety = restart_safety(report, *decision.server, next.restarted, going_down(next, *decision.server, now));
    if (decision.safety.safe && plan.returns_with)
      if (auto refusal = membership_refusal(report, {*decision.server}, *plan.returns_with)) decision.safety = *refusal;
    if (report.verdict == Verdict::healthy && decision.safety.safe)
      approve_in_flight(next, report, *decision.server, iso8601(now));
  });
  return decision;
}

namespace {

// Before COMMAND: the sessions on the server about to restart, and before the leader's step every
// server's, weighed against the last election; with --refuse-at-risk, the sessions at risk refuse it.
void before_command(const StepPlan& plan, const Context& context, probes::RestartPoller& poller, StepRun& run) {
  run.cons_before = sessions_on_restarted(plan, context, poller);
  run.cons_everywhere = sessions_before_election(plan, context, poller, run.cons_before);
  if (plan.refuse_at_risk)
    run.refused = election_risk(plan.restart, plan.last_election, run.cons_everywhere, plan.clients_before);
  if (run.refused) return;
  run.ephemerals_on = ephemerals_counter(plan);
  run.ephemerals_before = ephemerals_on(plan, context, poller, run.ephemerals_on);
}

// After COMMAND: the wait for recovery (one check only after a timeout), the clients that went, and
// the ephemerals' count again.
void after_command(const StepPlan& plan, LedgerUse& ledger, const Context& context, probes::RestartPoller& poller,
                   StepRun& run, probes::WatchEngine& watch) {
  auto& stop = context.executor.stop();
  Recovery recovery;
  if (run.outcome.timed_out) {
    probes::RestartPoller::Pause exclusive(poller);  // never a connection more than the checks need
    recovery.report = check_and_record(check_options_after_restart(plan), ledger, context);
  } else recovery = wait_for_recovery(plan, ledger, context, poller);
  run.report = std::move(recovery.report);
  run.healthy_streak = recovery.healthy_streak;
  if (!run.outcome.timed_out && !stop.requested(plan.interrupt_at))
    await_gone_clients(plan, run, context, recovery.give_up, watch);
  if (run.ephemerals_before) run.ephemerals_after = ephemerals_on(plan, context, poller, run.ephemerals_on);
  run.interrupted = stop.requested(plan.interrupt_at);
}

}  // namespace

StepRun run_restart(const StepPlan& plan, LedgerUse& ledger, const Context& context, probes::WatchEngine& watch) {
  StepRun run;
  run.started = Clock::now();
  auto& stop = context.executor.stop();
  probes::RestartPoller poller(context.executor, plan.servers, plan.restart, plan.leader_before,
                               tls_client_of(context));
  if (stop.requested(plan.interrupt_at)) {  // stopped before COMMAND could start: do not start it
    run.outcome = {127, "not run: interrupted", false, stop.signal(plan.interrupt_at)};
    run.interrupted = true;
  } else {
    before_command(plan, context, poller, run);
    if (run.refused) {
      run.outcome = {127, "not run: --refuse-at-risk", false, 0};
    } else {
      run.outcome = run_command(plan, context);
      run.interrupted = stop.requested(plan.interrupt_at);
    }
  }
  if (!run.interrupted && !run.refused) after_command(plan, ledger, context, poller, run, watch);
  poller.stop();
  run.timeline = poller.timeline();
  run.ended = Clock::now();
  record_outcome(plan, run, context);  // a refused step's approval ends there too
  return run;
}

void forget_approval(const StepPlan& plan, const std::string& server) {
  if (plan.state_file)
    change_ledger(*plan.state_file, plan.check_timeout, iso_now(),
                  [&](Ledger& ledger) { ledger.in_flight.erase(server); });
}

std::vector<RegistrationAbsence> seen_during(const std::vector<RegistrationAbsence>& absences, const StepRun& run) {
  std::vector<RegistrationAbsence> seen;
  for (const auto& absence : absences)
    if (absence.gone.steady <= run.ended && (!absence.back || absence.back->steady >= run.started))
      seen.push_back(absence);
  return seen;
}

StepFacts step_facts(const StepPlan& plan, const StepRun& run) {
  StepFacts facts;
  facts.server = plan.restart;
  facts.command = fmt::format("{}", fmt::join(plan.command, " "));
  facts.timeout = plan.timeout;
  facts.stable = plan.stable;
  facts.command_status = run.outcome.status;
  facts.spawn_error = run.outcome.spawn_error;
  facts.timed_out = run.outcome.timed_out;
  facts.interrupted = run.interrupted;
  facts.restart_seen = run.timeline.restart_seen;
  facts.healthy_streak = run.healthy_streak;
  facts.last_verdict = run.report.verdict;
  facts.version_before = plan.version_before;
  facts.clients_before = plan.clients_before;
  facts.clients_after = run.report.clients;
  facts.cons_before = run.cons_before;
  facts.servers_by_id = servers_by_id(run.report.servers);
  facts.downtime = run.timeline.downtime;
  facts.longest_leaderless = run.timeline.longest_leaderless;
  facts.connections_moved = run.timeline.connections_moved;
  facts.ephemerals_on = run.ephemerals_on;
  facts.ephemerals_before = run.ephemerals_before;
  facts.ephemerals_after = run.ephemerals_after;
  facts.cons_everywhere = run.cons_everywhere;
  facts.last_election = plan.last_election;
  auto row = std::ranges::find(run.report.servers, plan.restart, &ServerRow::name);
  if (row != run.report.servers.end() && !is_serving(row->state))
    facts.state_after = row->error.empty() ? std::string(to_string(row->state))
                                           : fmt::format("{}: {}", to_string(row->state), row->error);
  return facts;
}

}  // namespace zkverify::verifier
