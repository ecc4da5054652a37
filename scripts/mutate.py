#!/usr/bin/env python3
"""Weakens, one at a time, each rule a user relies on, and checks that the unit tests notice.

Each mutant is one small edit of one source line (the text must occur exactly once). For each, in a
scratch copy of the tree: apply it, rebuild the unit tests, run them; "killed" when a test fails
(or the mutant no longer builds: reported apart, as that proves nothing), "survived" when every
test passes. Not part of CI; docs/testing.md gives the last result. The unit tests mostly wait (fake
servers' delays and deadlines), so several mutants are tried at once, each in a scratch copy of its
own (--jobs, default 3); ccache shares their compiles.

  scripts/mutate.py [--only 'NAME_SUBSTRING|...'] [--jobs N] [--keep]    (scripts/mutate.sh is the same)
  scripts/mutate.py --check    only that each mutant's text occurs once (scripts/lint.sh runs it, so a
                               refactor that moves a rule's line updates its mutant in the same commit)
"""
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent

# (name, file, original text, weakened text)
MUTANTS = [
    ("--clients: a registration held by a new session counts as kept", "model/judge/client_changes.cpp",
     "{found->second->owner == registration->owner ? RegistrationChange::kept : RegistrationChange::renewed, path,",
     "{RegistrationChange::kept, path,"),
    ("--clients: a registration missing before the step is blamed on it", "model/judge/client_changes.cpp",
     "if (!was || !compared(*was) || !compared(now)) continue;",
     "if (!was) continue;"),
    ("--clients: a gone registration says nothing", "model/judge/client_changes.cpp",
     "    else if (delta.change == RegistrationChange::gone) findings.push_back(gone_finding(delta, context));\n",
     ""),
    ("--clients: the ledger keeps the first holders, so a loss is reported at every run after", "model/judge/client_changes.cpp",
     "    std::erase_if(kept, [&](const ClientPathRead& old) { return old.path == read.path; });\n    kept.push_back",
     "    if (std::ranges::find(kept, read.path, &ClientPathRead::path) == kept.end()) kept.push_back"),
    ("--clients: a step reads the gone registrations once, never waiting for them", "probes/watch_engine.cpp",
     "  back->wait(deadline, signals, nth);\n", ""),
    ("--clients: the sidecar forgets a gone registration, so its return under a new session is no loss",
     "model/judge/sidecar_book.cpp", "        status.clients_departed[delta.path] = delta.before;", ""),
    ("--clients: a step's client findings are not the step's", "model/judge/step.cpp",
     "  if (step.clients_before && step.clients_after)", "  if (false && step.clients_before && step.clients_after)"),
    ("--clients: a step does not say whose sessions the restarted server held", "model/judge/step.cpp",
     "  if (step.clients_before && step.cons_before)", "  if (false && step.clients_before && step.cons_before)"),
    ("--clients: a persistent child counts as a registration", "probes/client_reads.cpp",
     "if (stat.error != ZkError::ok || stat.stat.ephemeral_owner == 0) continue;",
     "if (stat.error != ZkError::ok) continue;"),
    ("a session closed for want of SASL is a failed round trip again (a false critical)", "model/judge/derived.cpp",
     "derived.sasl_required = trip && sasl_demanded(*trip);",
     "derived.sasl_required = trip && sasl_demanded(*trip) && trip->credentials_given;"),
    ("verdict: a critical finding makes the ensemble only degraded", "model/judge/checks.cpp",
     "if (finding.severity == Severity::critical) report.verdict = Verdict::critical;",
     "if (finding.severity == Severity::critical) report.verdict = Verdict::degraded;"),
    ("verdict: a warning leaves the ensemble healthy", "model/judge/checks.cpp",
     "      report.verdict = Verdict::degraded;", "      report.verdict = Verdict::healthy;"),
    ("majority of voters: half is enough", "model/judge/derived.cpp",
     "derived.majority = majority(derived.voters.voters);", "derived.majority = derived.voters.voters / 2;"),
    ("majority of voters: weakened for even counts only (2 of 4 is a quorum)", "model/judge/derived.cpp",
     "derived.majority = majority(derived.voters.voters);", "derived.majority = (derived.voters.voters + 1) / 2;"),
    ("safe-to-restart: the quorum weakened for even counts only (2 of 4 left is enough)",
     "model/judge/restart_plan.cpp",
     "count.majority = zkverify::majority(count.voters);", "count.majority = (count.voters + 1) / 2;"),
    ("smoke's quorum case: half of an even count passes", "model/judge/smoke_judge.cpp",
     "report.serving_voters >= majority(report.expected_voters)", "report.serving_voters * 2 >= report.expected_voters"),
    ("a committed write overrides no-quorum even when the voter count is known", "model/judge/derived.cpp",
     "short_of_majority && derived.voters.source == VoterSource::listed && derived.write_committed;",
     "short_of_majority && derived.write_committed;"),
    ("a poll nobody answered counts as evidence that none leads", "model/books/restart_timeline.cpp",
     "if (seen.someone_follows || !seen.someone_looking) return;", "if (seen.someone_follows) return;"),
    ("COMMAND inherits our sockets (a restarted server holds our connections open)",
     "verifier/check/child_process.cpp",
     "  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);\n", ""),
    ("--zoo-cfg's observers counted as voters", "model/judge/derived.cpp",
     "[](const ServerProbe& probe) { return !*probe.address.observer; }",
     "[](const ServerProbe& probe) { return probe.address.observer.has_value(); }"),
    ("a configuration file's value wins over the environment's", "verifier/commands/option_layers.cpp",
     "if (auto value = environment(variable); value && !value->empty()) return",
     "if (auto value = environment(variable); value && !value->empty() && !config) return"),
    ("a variable or a file may set --reset-state (the ledger forgotten on every run)", "verifier/commands/quorum.cpp",
     "        ->configurable(false);", "        ->configurable(true);"),
    ("a typed --servers does not hide the layers' --zoo-cfg", "verifier/commands/option_layers.cpp",
     "if (chosen.contains(key) || excluded(*option)) continue;", "if (chosen.contains(key)) continue;"),
    ("watch: a widened session may join a server that holds two of them already (maxClientCnxns=3)",
     "model/books/watch_book.cpp", "    if (count >= 2) crowded.push_back(server);", "    if (count >= 3) crowded.push_back(server);"),
    ("a read that failed on a minority: the quorum read taken one voter short", "model/judge/round_trip_checks.cpp",
     "bool quorum_read = read_back >= derived.majority;", "bool quorum_read = read_back + 1 >= derived.majority;"),
    ("a read that failed beside a quorum's reads is critical again", "model/judge/round_trip_checks.cpp",
     "quorum_read ? FindingCode::read_back_failed : FindingCode::round_trip_failed",
     "FindingCode::round_trip_failed"),
    ("the C client is given the addresses a name had at the open", "probes/c_client.cpp",
     "if (is_name(server.host)) add(server.host, server.port);", "if (false) add(server.host, server.port);"),
    ("a server's own zoo.cfg line (0.0.0.0) splits the views", "model/judge/views.cpp",
     "own ? as_listed(identity_of(member), others) : identity_of(member)", "identity_of(member)"),
    ("not-serving's 3.4 hint (peers dial their own lookup) given on every line", "model/judge/checks.cpp",
     'bool old_line = leader_row.version.starts_with("3.4.");', "bool old_line = true;"),
    ("unreachable: the leader's count said for a host that is no voter", "model/judge/checks.cpp",
     "auto still_synced = derived.leader_counts_every_follower && all_voters",
     "auto still_synced = derived.leader_counts_every_follower"),
    ("two leaders are not reported", "model/judge/checks.cpp",
     "if (derived.leaders.size() > 1) {", "if (derived.leaders.size() > 2) {"),
    ("sync proof: a leader is not taken as synced", "model/judge/derived.cpp",
     "if (row.state == ServerState::leader) return true;", "if (row.state == ServerState::leader) return false;"),
    ("sync proof: the leader's synced followers count one short", "model/judge/derived.cpp",
     "counts_every_follower = synced >= expected &&", "counts_every_follower = synced + 1 >= expected &&"),
    ("a slow write is degraded even without a quorum", "model/judge/round_trip_checks.cpp",
     "return timed_out && derived.leaders.size() == 1 && !derived.no_quorum;",
     "return timed_out && derived.leaders.size() == 1;"),
    ("safe-to-restart: a quorum may be left short by one", "model/judge/restart_plan.cpp",
     "count.remaining = count.synced - taken - static_cast<int>(count.leaving.size());",
     "count.remaining = count.synced - taken - static_cast<int>(count.leaving.size()) + 1;"),
    ("safe-to-restart: approvals in flight are not counted as going down", "model/judge/restart_plan.cpp",
     "else if (going_down.contains(row.name)) count.leaving.push_back(row.name);",
     "else if (going_down.contains(row.name)) {}"),
    ("order: the leader is not last", "model/judge/restart_plan.cpp",
     "    case ServerState::leader: return 3;", "    case ServerState::leader: return 0;"),
    ("a restart round forgets a server seen down and back", "model/judge/restart_round.cpp",
     "    if (!serving) approval.seen_down = true;", "    if (!serving) approval.seen_down = false;"),
    ("restart seen: one poll without the server is taken as a restart", "model/books/restart_timeline.cpp",
     "if (polls_not_serving_ >= 2 || counter_fell) timeline_.restart_seen = true;",
     "if (polls_not_serving_ >= 1 || counter_fell) timeline_.restart_seen = true;"),
    ("restart seen: a Received count that fell is not a restart", "model/books/restart_timeline.cpp",
     "*seen.target_received < *last_received_;", "*seen.target_received < 0;"),
    ("step: an unseen restart is not reported", "model/judge/step.cpp",
     "  else if (!step.timed_out && !step.restart_seen)", "  else if (false)"),
    ("step: --stable is reached one check early", "model/judge/step.cpp",
     "  else if (!step.timed_out && step.healthy_streak < step.stable)",
     "  else if (!step.timed_out && step.healthy_streak + 1 < step.stable)"),
    ("step and roll: the watch's findings do not count", "model/judge/step.cpp",
     "  all.findings.insert(all.findings.end(), watch_findings.begin(), watch_findings.end());", ""),
    ("step and roll: the step's own findings do not count", "model/judge/step.cpp",
     "  all.findings.insert(all.findings.end(), step_findings.begin(), step_findings.end());", ""),
    ("step: goes ahead on a degraded ensemble", "verifier/check/restart_step.hpp",
     "return server && report.verdict == Verdict::healthy && safety.safe;",
     "return server && report.verdict != Verdict::critical && safety.safe;"),
    ("--stable: an unhealthy check does not reset the streak", "verifier/check/restart_step.cpp",
     "recovery.healthy_streak = counts ? recovery.healthy_streak + 1 : 0;",
     "recovery.healthy_streak = counts ? recovery.healthy_streak + 1 : recovery.healthy_streak;"),
    ("--stable: healthy checks count before the restart was seen", "verifier/check/restart_step.cpp",
     "bool counts = recovery.report.verdict == Verdict::healthy && restart_seen;",
     "bool counts = recovery.report.verdict == Verdict::healthy;"),
    ("quorum --wait: an unhealthy attempt does not reset the streak", "verifier/commands/quorum.cpp",
     "streak = report.verdict == Verdict::healthy ? streak + 1 : 0;",
     "streak = report.verdict == Verdict::healthy ? streak + 1 : streak;"),
    ("readiness: ready when any check passes", "model/judge/readiness.cpp",
     "readiness.ready = std::ranges::all_of(readiness.checks, &ReadinessCheck::passed);",
     "readiness.ready = std::ranges::any_of(readiness.checks, &ReadinessCheck::passed);"),
    ("liveness: a stuck cycle loop stays alive ten times longer", "model/judge/readiness.cpp",
     "return now - last_cycle_end <= 3 * interval + timeout;", "return now - last_cycle_end <= 30 * interval + timeout;"),
    ("ledger: a zxid that went backwards is no data loss", "model/judge/ledger_update.cpp",
     "if (previous && *current < previous->high_zxid && !previous->data_loss)",
     "if (previous && *current < previous->high_zxid && false)"),
    ("ledger: a durability marker gone is no data loss", "model/judge/ledger_update.cpp",
     "  if (!gone.empty())", "  if (false)"),
    ("ledger: the data-loss alarm is not sticky", "model/judge/ledger_update.cpp",
     "  if (run.previous && run.previous->data_loss)\n    add(draft, FindingCode::data_loss",
     "  if (false)\n    add(draft, FindingCode::data_loss"),
    ("watch: lost writes are not reported", "model/judge/watch_judge.cpp",
     "  if (totals.writes_lost > 0)", "  if (totals.writes_lost > 1)"),
    ("watch: an expired session is not reported", "model/judge/watch_judge.cpp",
     "  if (totals.sessions_expired > 0)", "  if (totals.sessions_expired > 1)"),
    ("round trip: other bytes read back still match", "probes/round_trip.cpp",
     "read.bytes_match = probe.result.data == plan.payload;", "read.bytes_match = true;"),
    ("smoke: a listed id outside the membership passes membership-consistent", "model/judge/smoke_judge.cpp",
     "FindingCode::membership_unlisted, FindingCode::membership_unknown, FindingCode::duplicate_id,",
     "FindingCode::membership_unlisted, FindingCode::duplicate_id,"),
    ("ids: a server at another id's host is never named", "model/judge/id_checks.cpp",
     "if (at_host.size() != 1 || at_host.front()->id == *row.id) continue;",
     "if (at_host.size() != 0 || at_host.front()->id == *row.id) continue;"),
    ("ids: a short name matches any longer one it begins", "model/judge/id_checks.cpp",
     "return longer.starts_with(shorter) && longer[shorter.size()] == '.';",
     "return longer.starts_with(shorter);"),
    ("ids: two servers with one id and other lists stay a warning", "model/judge/id_checks.cpp",
     "if (first && other && first != other)", "if (first && other && first == other)"),
    ("3.4 lists: --zoo-cfg's given lists are ignored", "model/judge/views.cpp",
     "return given == facts.given_lists.end() || given->second.members.empty() ? nullptr : &given->second;",
     "return nullptr;"),
    ("3.4 lists: a given list wins over the server's own report", "model/judge/views.cpp",
     "if (has_facts(probe.conf) && !probe.conf->facts.members.empty()) return &probe.conf->facts;",
     "if (has_facts(probe.conf) && !probe.conf->facts.members.empty() && facts.given_lists.empty()) return &probe.conf->facts;"),
    ("order --to: a step that could elect two leaders is not looked for", "model/judge/restart_plan.cpp",
     "      return OrderRefusal{step.name, std::move(refusal->reason)};", "      continue;"),
    ("order --to: a refused order still exits 0", "verifier/commands/order.cpp",
     "                                 to->refusal->server, to->refusal->reason);\n      return kExitDegraded;",
     "                                 to->refusal->server, to->refusal->reason);\n      return kExitHealthy;"),
    ("reconfig: two lists under one version count as a history", "model/judge/checks.cpp",
     "return versions.size() == views.size();", "return !versions.empty();"),
    ("reconfig: an older reconfig version is a rival list", "model/judge/checks.cpp",
     "if (reconfig_history(views)) return check_config_behind(views, findings);",
     "if (false) return check_config_behind(views, findings);"),
    ("smoke: no leader passes single-leader", "model/judge/smoke_judge.cpp",
     '  return failed("single-leader", why.empty() ? "no single listed server leads" : why);',
     '  return passed("single-leader", why.empty() ? "no single listed server leads" : why);'),
    ("smoke: a failed case still exits 0", "verifier/commands/smoke.cpp",
     "return count(cases, CaseOutcome::failed) == 0 && !context.executor.stop().requested() ? kExitHealthy",
     "return count(cases, CaseOutcome::failed) >= 0 && !context.executor.stop().requested() ? kExitHealthy"),
    ("smoke: ephemeral-cleanup looks before the servers have removed the closed session's node",
     "probes/smoke_cases.cpp",
     "          if (box) box->wait(removed_by, plan.stop_signals);", "          (void)box;"),
    ("membership: two lists' majorities taken as disjoint only when the lists share no voter",
     "model/judge/views.cpp",
     "  take(first, {}, first_needs, witness.first);        // then shared ones, smallest first\n", ""),
    ("membership: lists whose majorities can be disjoint are not reported (split-brain-possible)",
     "model/judge/checks.cpp",
     "      if (auto witness = disjoint_majorities(views[i].voters(), views[j].voters())) {",
     "      if (auto witness = disjoint_majorities(views[i].voters(), views[j].voters()); witness && false) {"),
    ("plan: two servers added in one step", "model/judge/membership_plan.cpp",
     "    plan.steps.push_back(PlanStep{true, id, name, current, running.names});",
     "    if (current.size() % 2 == 0) continue;\n    plan.steps.push_back(PlanStep{true, id, name, current, running.names});"),
    ("plan: removals lowest id first", "model/judge/membership_plan.cpp",
     "  for (auto id_at = plan.from.rbegin(); id_at != plan.from.rend(); ++id_at) {  // the highest id first",
     "  for (auto id_at = plan.from.begin(); id_at != plan.from.end(); ++id_at) {  // the highest id first"),
    ("safe-to-restart --to: a restart onto a list with disjoint majorities is allowed", "model/judge/restart_plan.cpp",
     "    if (auto witness = disjoint_majorities(returns_with, voters))",
     "    if (auto witness = disjoint_majorities(returns_with, voters); witness && false)"),
    ("JUnit: failures are not counted", "model/render/junit.cpp",
     "auto failures = count(suite.cases, CaseOutcome::failed);", "auto failures = 0;"),
    ("roll: goes on after a step that was not ok", "verifier/commands/roll.cpp",
     "    if (!run_one(context, ledger, engine, *decision.server)) return;",
     "    (void)run_one(context, ledger, engine, *decision.server);"),
    ("roll: a step is ok whatever its watch saw (expired sessions, lost writes)", "verifier/commands/roll.cpp",
     "step_verdict(run.report, step.findings, judge_watch(totals, tuning_.max_unavailable)) == Verdict::healthy;",
     "step_verdict(run.report, step.findings, {}) == Verdict::healthy;"),
    ("roll's verdict: a critical watch finding is not critical", "model/judge/roll.cpp",
     "  bool any_critical = critical(roll.watch_findings);", "  bool any_critical = false;"),
    ("roll's verdict: a roll that did not complete is healthy", "model/judge/roll.cpp",
     "  if (any_finding || !roll.complete) return Verdict::degraded;", "  if (any_finding) return Verdict::degraded;"),
    ("exit codes: degraded exits 0", "verifier/commands/exit_codes.cpp",
     "    case Verdict::degraded: return kExitDegraded;", "    case Verdict::degraded: return kExitHealthy;"),
    ("TLS relay: a connection from another process is carried too", "probes/relay.cpp",
     "name.data() + name.size() && is_connection(fd, peer, relay)) return true;",
     "name.data() + name.size()) return true;"),
    ("TLS relay: a connection to another address on the relay's port is taken for its own", "probes/relay.cpp",
     "         address.sin_addr.s_addr == htonl(expected.address().to_v4().to_uint()) &&\n", ""),
    ("TLS relay: every server of a session on 127.0.0.1 (a failed-over session never goes home)",
     "probes/relay.cpp", "  if (index > 0 && index < kLoopbackAddresses) {",
     "  if (index > kLoopbackAddresses) {"),
    ("TLS: a connection ended without close_notify retires its session (the next handshake full)", "probes/tls.cpp",
     "  SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);", "  (void)ssl;"),
    ("serve: conf beside srvr, with the sidecar's long-lived session a third connection to a server",
     "probes/four_letter.cpp", "  if (limits.tls || limits.one_connection_at_a_time) {", "  if (limits.tls) {"),
    ("serve: a server reported once srvr is in, its round-trip session beside the words", "probes/four_letter.cpp",
     "  if (limits.verdict_words_only && !limits.one_connection_at_a_time) {", "  if (limits.verdict_words_only) {"),
    ("TLS: a server's certificate without the listed host's name is accepted", "probes/tls.cpp",
     "if (depth == 0 && check_name && !ssl::host_name_verification(host)(true, context)) {",
     "if (depth == 0 && check_name && !ssl::host_name_verification(host)(true, context) && false) {"),
    ("step: a signal during the wait after COMMAND is ignored until --step-timeout", "verifier/check/restart_step.cpp",
     "if (stop.wait_until(Clock::now() + plan.interval, plan.interrupt_at)) break;",
     "(void)stop.wait_until(Clock::now() + plan.interval, plan.interrupt_at);"),
    ("smoke --junit is written in place (a reader can see half a report)", "verifier/commands/smoke.cpp",
     "write_file_atomically(*options_.junit, render_junit(", "std::ofstream(*options_.junit) << (render_junit("),
    ("roll --report is written in place (a reader can see half a report)", "verifier/commands/roll.cpp",
     "write_file_atomically(*html_report_, render_roll_html(roll_));",
     "std::ofstream(*html_report_) << render_roll_html(roll_);"),
    ("tls-cert-expiring: a certificate inside the warning window passes unnamed", "model/judge/capability_checks.cpp",
     "  return certificate.not_after - tls.now < tls.expiry_warning;",
     "  return certificate.not_after < tls.now;"),
    ("split brain: lists whose majorities can be disjoint are not reported", "model/judge/checks.cpp",
     "      if (auto witness = disjoint_majorities(views[i].voters(), views[j].voters())) {",
     "      if (auto witness = disjoint_majorities(views[i].voters(), views[j].voters()); witness && false) {"),
    ("split brain: the shared voters are counted twice (5 to 7 looks safe)", "model/judge/views.cpp",
     "  take(second, witness.first, second_needs, witness.second);", "  take(second, {}, second_needs, witness.second);"),
    ("views: a follower outside the leader's list counted as a serving voter", "model/judge/derived.cpp",
     "else if (voters.empty() || voters.contains(*id))", "else if (true)"),
    ("TLS: the server's chain is not verified (any CA, any dates)", "probes/tls.hpp",
     "  stream.set_verify_mode(boost::asio::ssl::verify_peer);", "  stream.set_verify_mode(boost::asio::ssl::verify_none);"),
    ("TLS: an expired server certificate is not named as expired", "probes/tls.cpp",
     "    case X509_V_ERR_CERT_HAS_EXPIRED:\n      return {TlsFailure::expired,",
     "    case X509_V_ERR_CERT_HAS_EXPIRED:\n      return {TlsFailure::other,"),
    ("config layers: a flag typed does not win over the environment", "verifier/commands/option_layers.cpp",
     "if (chosen.contains(key) || excluded(*option)) continue;", "if (excluded(*option)) continue;"),
    ("roll: a step's release after its restart is not the server's version now", "model/judge/roll.cpp",
     "    if (!step.version_after.empty()) versions[step.server] = step.version_after;", ""),
    ("step/roll --to: a restarted server keeps the list --zoo-cfg gave before", "verifier/check/restart_step.cpp",
     "  if (held != given_lists.end() && returns_list) held->second = *returns_list;",
     "  if (held != given_lists.end() && returns_list && false) held->second = *returns_list;"),
    ("--clients: the live follower never sees a registration come back", "model/books/registration_log.cpp",
     "    absence.back = now;", "    absence.back = std::nullopt;"),
    ("--clients: a change seen during a round of following is dropped", "model/books/watch_cadence.cpp",
     "  return std::exchange(follow_again_, false) && !stopped_;", "  follow_again_ = false;\n  return false;"),
    ("--clients: a lost registration's finding says nothing of what was followed live",
     "model/judge/client_changes.cpp", "  if (seen == context.seen.rend()) return \"\";",
     "  if (true) return \"\";"),
    ("watch: after a stall the writer bursts to catch up", "model/books/watch_cadence.cpp",
     "  return std::max(due + interval_, now);", "  return due + interval_;"),
    ("watch: a quick stop still settles and reads back", "model/books/watch_stop.cpp",
     "    case StopStage::final_checks: return plan_.running && plan_.final_checks;",
     "    case StopStage::final_checks: return plan_.running;"),
    ("watch: the stop waits for its sink however long it takes", "probes/watch_engine.cpp",
     "        [generation](Engine& self) { self.stage_ended(generation, false); });",
     "        [generation](Engine& self) {\n          if (self.stop_sequence->stage() != StopStage::deliver) self.stage_ended(generation, false);\n        });"),
    ("watch: a session that failed over stays where it landed", "probes/watch_engine.cpp",
     "  bring_sessions_home();\n  maybe_check();", "  maybe_check();"),
    ("watch: a session is sent home without seeing its server serve", "probes/watch_crew.cpp",
     "    if (!serves) continue;\n    bool moving", "    if (!serves && false) continue;\n    bool moving"),
    ("3.4 create path: the created node's stat is not read (no czxid)", "probes/c_create.cpp",
     "        if (created.error != ZkError::ok) return done(std::move(created));\n"
     "        stat_created(*session, std::move(created), std::move(done));",
     "        return done(std::move(created));"),
    ("roll --dry-run: exit 0 on a plan with a step that is not safe", "verifier/commands/roll.cpp",
     "return report.verdict == Verdict::healthy && plan.all_safe() ? kExitHealthy : kExitDegraded;",
     "return report.verdict == Verdict::healthy ? kExitHealthy : kExitDegraded;"),
    ("safe-to-restart --to: the look-ahead stops at a list held only by the servers restarting",
     "model/judge/restart_plan.cpp", "    if (holders.empty()) continue;", "    if (holders.empty()) return std::nullopt;"),
    ("serve --no-write: the local mntr's zk_peer_state skipped as the sync proof", "verifier/sidecar/cycle.cpp",
     "  if (mntr.error == ProbeError::ok)\n", "  if (false)\n"),
    ("ids: a restart judged while two listed servers claim one id", "model/judge/restart_plan.cpp",
     "  if (auto collision = id_collision(report)) return RestartSafety{false, *collision};\n", ""),
    ("ids: the leader's count of voting followers proves no duplicate", "model/judge/id_checks.cpp",
     "*derived.leader_voting_followers > derived.voters.voters - 1)",
     "*derived.leader_voting_followers > derived.voters.voters + 1)"),
    ("write-timed-out: followers at 0x0 beside a leader with nothing applied in its epoch called lost",
     "model/judge/round_trip_checks.cpp", "if (!leader.zxid || leader.zxid->counter() == 0) return left;",
     "if (!leader.zxid || leader.zxid->value == 0) return left;"),
    ("ledger: the data-loss record is the first loss a step happened to see (order-dependent)",
     "model/judge/ledger_update.cpp", "std::ranges::min(draft.losses).second", "draft.losses.front().second"),
    ("ids: a server on a shared id counted as one more serving voter", "model/judge/derived.cpp",
     "  std::set<int> serving_ids;", "  std::multiset<int> serving_ids;"),
    ("C session: a request made before the handle exists fails at once", "probes/c_session.hpp",
     "if (!handle_ && !closing_ && !open_failed_) {", "if (false) {"),
    ("output: text handed over after the finish is still written", "verifier/check/output.cpp",
     "    if (stopping()) return;\n", ""),
    ("output: every insertion handed over at once, splitting a line", "verifier/check/output.cpp",
     "  auto end = pending_.rfind('\\n');", "  auto end = pending_.empty() ? std::string::npos : pending_.size() - 1;"),
    ("smoke: a stop that came before the wait for a notice does not end it", "probes/notice_wait.hpp",
     "    if (signals && signals->requested(nth)) settle(std::nullopt);", ""),
    ("timeline: steps left in the order they were collected, not by start", "model/render/timeline_view.cpp",
     "return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;", "return false;"),
    ("timeline: a TLS handshake timed from the exchange's start, not its connection", "model/facts/facts.cpp",
     "steps.push_back({server, what + handshake, asked, exchange.secured});",
     "steps.push_back({server, what + handshake, exchange.started, exchange.secured});"),
    ("SASL: the connect response passed to the C client before the exchange ends", "probes/sasl_handshake.cpp",
     "  response_seen_ = true;\n  held_ = wire::frame(packet);",
     "  response_seen_ = true;\n  for_client_ = wire::frame(packet);"),
    ("SASL: a server's refusal taken for success", "probes/sasl_handshake.cpp",
     "  if (reply->error != 0)\n", "  if (false)\n"),
    ("SASL: a frame's length prefix ignored (a packet read from the wrong place)", "model/parse/zk_wire.cpp",
     "  auto packet = pending_.substr(4, size);", "  auto packet = pending_.substr(0, size);"),
    ("SASL: refusals of several servers each said apart (alike ones not together)", "model/judge/round_trip_checks.cpp",
     "if (told[j] || other.mechanism != alike.mechanism", "if (told[j] || j != i || other.mechanism != alike.mechanism"),
    ("SASL: a refused round trip not named (the refusal lost before the judge)", "probes/round_trip.cpp",
     "    if (auto refusal = sessions[i]->sasl_refusal()) trip.sasl_refusals.push_back(std::move(*refusal));\n", ""),
    ("Kerberos: a keytab's ticket end taken for an expiry (a warning every run)", "model/judge/capability_checks.cpp",
     "  if (!k.from_keytab && k.ticket_ends &&", "  if (k.ticket_ends &&"),
    ("Kerberos: a principal's expiry never warned", "model/judge/capability_checks.cpp",
     "  if (k.principal_expires && left(", "  if (false && k.principal_expires && left("),
    ("watch --clients: a registration held by a new session told as held by the same", "model/judge/client_changes.cpp",
     "  if (was->owner == now.owner)", "  if (was->owner != 0)"),
    ("clients-moved: connections that moved in part told as all of them", "model/books/restart_timeline.cpp",
     "  now.all = now.moved() >= now.clients;", "  now.all = now.moved() > 0;"),
    ("ephemerals-fell: a count that rose told as fallen", "model/judge/server_side.cpp",
     "  if (!before || !after || *after >= *before) return std::nullopt;",
     "  if (!before || !after || *after == *before) return std::nullopt;"),
    ("election-outlasts-timeouts: a session whose timeout equals the election's length is not at risk",
     "model/judge/server_side.cpp", "    if (timeout > election) continue;", "    if (timeout >= election) continue;"),
    ("roll: an info finding (where clients' connections went) degrades a complete roll", "model/judge/roll.cpp",
     "    any_finding = any_finding || beyond_info(step.findings) || step.verdict != Verdict::healthy;",
     "    any_finding = any_finding || !step.findings.empty() || step.verdict != Verdict::healthy;"),
]


def run(cmd, cwd, timeout=1800):
    # ccache finds one copy's compiles in another's: paths relative to the copy, its directory unhashed.
    env = dict(os.environ, CCACHE_BASEDIR=str(cwd), CCACHE_NOHASHDIR="1")
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)


def scratch_copy():
    scratch = Path(tempfile.mkdtemp(prefix="zkverify-mutate-"))
    files = subprocess.check_output(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=TOP, text=True).split()
    for name in files:
        source = TOP / name
        if source.is_file():
            target = scratch / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return scratch


def build_and_test(scratch):
    built = run(["cmake", "--build", "build", "--target", "unit_tests", "-j", str(os.cpu_count() or 2)], scratch)
    if built.returncode != 0:
        return "no-build", built.stdout[-2000:]
    tested = run(["build/tests/unit_tests", "--order", "decl", "--abort"], scratch, timeout=900)
    return ("passed" if tested.returncode == 0 else "failed"), tested.stdout[-3000:]


def prepared_copy(baseline):
    """A scratch copy, configured and built; with `baseline`, its unmutated unit tests must pass (else
    the run stops: a mutant killed there would prove nothing)."""
    scratch = scratch_copy()
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    # The unit tests read their data from the original tree (the same files): one -D for every copy.
    # Each file alone (no unity build): a mutant recompiles its own file, not the seven beside it.
    configured = run(["cmake", "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Debug", f"-DZKVERIFY_TEST_SOURCE_DIR={TOP}",
                      "-DCMAKE_UNITY_BUILD=OFF", *launcher], scratch)
    if configured.returncode != 0:
        sys.exit(f"mutate: configure failed:\n{configured.stdout}")
    if not baseline:
        built = run(["cmake", "--build", "build", "--target", "unit_tests", "-j", str(os.cpu_count() or 2)], scratch)
        if built.returncode != 0:
            sys.exit(f"mutate: the unmutated tree does not build:\n{built.stdout[-2000:]}")
        return scratch
    outcome, log = build_and_test(scratch)
    if outcome != "passed":
        sys.exit(f"mutate: the unmutated tree does not pass ({outcome}):\n{log}")
    return scratch


def try_mutant(scratch, mutant):
    name, path, original, weakened = mutant
    source = scratch / path
    text = source.read_text()
    if text.count(original) != 1:
        return name, "stale", f"{path}: the original text occurs {text.count(original)} times"
    started = time.monotonic()
    source.write_text(text.replace(original, weakened))
    try:
        outcome, _ = build_and_test(scratch)
    finally:
        source.write_text(text)
    verdict = {"failed": "killed", "passed": "SURVIVED", "no-build": "no-build"}[outcome]
    return name, verdict, f"{path} ({time.monotonic() - started:.0f}s)"


def try_all(mutants, jobs, keep):
    """Each worker takes the next mutant in its own copy; results in the order they end."""
    todo = queue.Queue()
    for mutant in mutants:
        todo.put(mutant)
    results, lock = [], threading.Lock()

    def worker(scratch):
        while True:
            try:
                mutant = todo.get_nowait()
            except queue.Empty:
                return
            result = try_mutant(scratch, mutant)
            with lock:
                results.append(result)
                print(f"  {result[1]:9} {result[0]}  [{result[2]}]", flush=True)

    copies = [prepared_copy(baseline=True)]  # it also fills ccache for the others
    copies += [prepared_copy(baseline=False) for _ in range(1, min(jobs, len(mutants)))]
    print(f"mutate: {len(mutants)} mutants, {len(copies)} at a time in {', '.join(map(str, copies))}", flush=True)
    threads = [threading.Thread(target=worker, args=(copy,)) for copy in copies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not keep:
        for copy in copies:
            shutil.rmtree(copy, ignore_errors=True)
    return results


def stale(mutants, top):
    """The mutants whose original text does not occur exactly once in `top`'s copy of their file."""
    found = []
    for name, path, original, _ in mutants:
        count = (top / path).read_text().count(original) if (top / path).is_file() else 0
        if count != 1:
            found.append((name, "stale", f"{path}: the original text occurs {count} times"))
    return found


def main():
    if "--check" in sys.argv:
        for name, _, detail in stale(MUTANTS, TOP):
            print(f"mutate: stale mutant '{name}': {detail}", file=sys.stderr)
        sys.exit(1 if stale(MUTANTS, TOP) else 0)
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 3
    wanted = only.split("|") if only else []  # --only 'a|b': the mutants whose name contains a or b
    mutants = [m for m in MUTANTS if not wanted or any(w in m[0] for w in wanted)]
    started = time.monotonic()
    results = try_all(mutants, max(jobs, 1), "--keep" in sys.argv)
    killed = sum(1 for _, verdict, _ in results if verdict == "killed")
    print(f"mutate: {killed} of {len(results)} mutants killed in {(time.monotonic() - started) / 60:.0f} min")
    for name, verdict, detail in results:
        if verdict != "killed":
            print(f"  {verdict}: {name}: {detail}")
    sys.exit(0 if killed == len(results) else 1)


if __name__ == "__main__":
    main()
