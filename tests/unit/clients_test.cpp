// The clients' registrations (--clients): what a change of holder between two looks means, how the
// ledger carries them between runs, and what a step reports of them. Pure: facts in, findings out.

#include <algorithm>

#include <catch2/catch.hpp>

#include "model/books/registration_log.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/ledger.hpp"
#include "model/judge/ledger_update.hpp"
#include "model/judge/sidecar_book.hpp"
#include "model/judge/step.hpp"
#include "model/render/metrics.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

namespace {

// /brokers/ids as read, with broker `id` held by session `owner` for each pair.
ClientPathRead brokers(std::vector<std::pair<int, std::int64_t>> held) {
  ClientPathRead read{"/brokers/ids", ZkError::ok, {}, ""};
  for (auto [id, owner] : held) read.held.push_back({"/brokers/ids/" + std::to_string(id), owner, 1000 + id, ""});
  return read;
}

ClientPathRead controller(int broker, std::int64_t owner) {
  auto data = R"({"version":1,"brokerid":)" + std::to_string(broker) + R"(,"timestamp":"1"})";
  return {"/controller", ZkError::ok, {{"/controller", owner, 5, data}}, data};
}

ClientPathRead epoch(const std::string& value) { return {"/controller_epoch", ZkError::ok, {}, value}; }

std::vector<RegistrationChange> changes(const std::vector<RegistrationDelta>& deltas) {
  std::vector<RegistrationChange> out;
  for (const auto& delta : deltas) out.push_back(delta.change);
  return out;
}

// A look's time: `seconds` after a fixed start, on both clocks.
Moment at(double seconds) {
  auto offset = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
  return {Clock::time_point{} + offset, std::chrono::system_clock::time_point{} + offset};
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& finding : findings) out.emplace_back(to_string(finding.code));
  return out;
}

}  // namespace

TEST_CASE("registrations: kept, renewed, gone and new, path by path") {
  auto before = std::vector{brokers({{1, 0x11}, {2, 0x22}, {3, 0x33}})};
  auto after = std::vector{brokers({{1, 0x11}, {2, 0x2f}, {4, 0x44}})};
  auto deltas = compare_registrations(before, after);
  using enum RegistrationChange;
  CHECK(changes(deltas) == std::vector{kept, renewed, gone, added});
  CHECK(deltas[1].before.owner == 0x22);
  CHECK(deltas[1].after.owner == 0x2f);

  auto findings = client_findings(before, after, {"during the step on pzoo-0"});
  REQUIRE(codes(findings) == std::vector<std::string>{"client-session-lost", "client-gone"});
  CHECK_THAT(findings[0].message, Contains("Kafka broker 2 (/brokers/ids/2)") && Contains("0x22") && Contains("0x2f") &&
                                      Contains("during the step on pzoo-0"));
  CHECK_THAT(findings[1].message, Contains("Kafka broker 3") && Contains("not there now"));
  CHECK(findings[0].severity == Severity::warning);
}

TEST_CASE("registration log: a live follower's looks give each absence its start, its end and its new holder") {
  RegistrationLog log;
  log.look({brokers({{1, 0x11}, {9, 0x99}})}, at(0));
  CHECK(log.absences().empty());
  log.look({brokers({{1, 0x11}})}, at(3));                                              // broker 9 went
  log.look({ClientPathRead{"/brokers/ids", ZkError::connection_loss, {}, ""}}, at(4));  // says nothing
  log.look({brokers({{1, 0x11}})}, at(4.2));                                            // still gone: one absence
  REQUIRE(log.absences().size() == 1);
  CHECK_FALSE(log.absences()[0].back);
  log.look({brokers({{1, 0x11}, {9, 0x9a}})}, at(4.5));  // back under a new session
  // Broker 1 held by a new session at a look that never missed it: went and came back between looks.
  log.look({brokers({{1, 0x12}, {9, 0x9a}})}, at(6));
  const auto& seen = log.absences();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].path == "/brokers/ids/9");
  CHECK(seen[0].owner_before == 0x99);
  CHECK(seen[0].last_held.steady == at(0).steady);
  CHECK(seen[0].gone.steady == at(3).steady);
  REQUIRE(seen[0].back);
  CHECK(seen[0].back->steady == at(4.5).steady);
  CHECK(seen[0].owner_after == 0x9a);
  CHECK(seen[1].path == "/brokers/ids/1");
  CHECK(seen[1].last_held.steady == at(4.5).steady);
  CHECK((seen[1].gone.steady == at(6).steady && seen[1].back && seen[1].back->steady == at(6).steady));
  CHECK(seen[1].owner_after == 0x12);

  // A path first read late: its first look only remembers, one missing then is not an absence.
  log.look({ClientPathRead{"/controller", ZkError::no_node, {}, ""}}, at(7));
  log.look({controller(2, 0x22)}, at(8));
  CHECK(log.absences().size() == 2);
}

TEST_CASE("a lost registration's finding says what the live follower saw of it") {
  std::vector<ClientPathRead> before{brokers({{9, 0x0100000000000099}})};
  std::vector<ClientPathRead> after{brokers({{9, 0x010000000000009a}})};
  LossContext context{"during the step on pzoo-0"};
  context.seen.push_back({"/brokers/ids/9", 0x0100000000000099, at(0), at(3), at(4.5), 0x010000000000009a});
  context.seen.push_back({"/brokers/ids/9", 0x77, at(0), at(1), at(2), 0x0100000000000099});  // another session's
  auto findings = client_findings(before, after, context);
  REQUIRE(codes(findings) == std::vector<std::string>{"client-session-lost"});
  CHECK_THAT(findings[0].message, Contains("followed live: it went at 1970-01-01T00:00:03.000Z and was held again "
                                           "1.5s later"));
  // Still missing at the end: when it went.
  context.seen[0].back.reset();
  findings = client_findings(before, {brokers({})}, context);
  REQUIRE(codes(findings) == std::vector<std::string>{"client-gone"});
  CHECK_THAT(findings[0].message, EndsWith("followed live: it went at 1970-01-01T00:00:03.000Z"));
  // Went and came back between two looks.
  context.seen[0].back = context.seen[0].gone;
  CHECK_THAT(client_findings(before, after, context)[0].message,
             Contains("never seen missing (it went and came back between two looks, 3.0s apart)"));
  // Nothing seen of it (a follower that could not follow): the finding as before.
  context.seen.clear();
  CHECK_THAT(client_findings(before, after, context)[0].message, !Contains("followed live"));
}

TEST_CASE("registrations: one missing before is not blamed, and a path unread on either side says nothing") {
  auto before = std::vector{brokers({{1, 0x11}})};
  auto later = std::vector{brokers({{1, 0x11}, {2, 0x22}})};
  CHECK(client_findings(before, later, {"x"}).empty());  // broker 2 is new, not a loss

  auto unread = std::vector{ClientPathRead{"/brokers/ids", ZkError::connection_loss, {}, ""}};
  CHECK(client_findings(before, unread, {"x"}).empty());
  CHECK(client_findings(unread, before, {"x"}).empty());
  auto findings = unread_client_findings(unread);
  REQUIRE(codes(findings) == std::vector<std::string>{"clients-unread"});
  CHECK_THAT(findings[0].message, Contains("/brokers/ids") && Contains("connection_loss"));

  // A path that is not there is a fact: its registrations, if it had any, are gone.
  auto none = std::vector{ClientPathRead{"/brokers/ids", ZkError::no_node, {}, ""}};
  CHECK(unread_client_findings(none).empty());
  CHECK(codes(client_findings(before, none, {"x"})) == std::vector<std::string>{"client-gone"});
}

TEST_CASE("Kafka's controller held by a new session is a failover, with its brokers and epoch") {
  auto before = std::vector{controller(1, 0x11), epoch("4")};
  auto after = std::vector{controller(2, 0x22), epoch("5")};
  auto findings = client_findings(before, after, {"during the step on zoo-1"});
  REQUIRE(codes(findings) == std::vector<std::string>{"controller-moved"});
  CHECK_THAT(findings[0].message,
             Contains("broker 1 (session 0x11)") && Contains("broker 2 (session 0x22)") && Contains("4 -> 5"));
  CHECK(controller_broker(R"({"brokerid":7})") == 7);
  CHECK_FALSE(controller_broker("not json"));
}

TEST_CASE("the ledger carries the registrations between runs and reports what changed since") {
  auto facts = healthy_five();
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  facts.round_trip->clients = {brokers({{1, 0x11}, {9, 0x99}})};
  auto first = apply_ledger(facts, judge(facts), std::nullopt, "2026-12-07T05:00:00Z");
  CHECK(codes(first.findings) == std::vector<std::string>{});  // nothing to compare with yet
  REQUIRE(first.next.clients.size() == 1);

  // Through the ledger's file format and back.
  auto stored = ledger_from_json(to_json(first.next));
  REQUIRE(stored.clients.size() == 1);
  CHECK(stored.clients[0].held[1].owner == 0x99);

  facts.round_trip->clients = {brokers({{1, 0x11}, {9, 0x9a}})};
  auto second = apply_ledger(facts, judge(facts), stored, "2026-12-07T05:01:00Z");
  REQUIRE(std::ranges::count(codes(second.findings), "client-session-lost") == 1);
  CHECK_THAT(second.findings[0].message, Contains("since the last run (2026-12-07T05:00:00Z)"));
  CHECK(second.next.clients[0].held[1].owner == 0x9a);  // the next run compares with the new holder

  // A run that could not read the path keeps the last holders for the run after it.
  facts.round_trip->clients = {ClientPathRead{"/brokers/ids", ZkError::no_auth, {}, ""}};
  auto third = apply_ledger(facts, judge(facts), second.next, "2026-12-07T05:02:00Z");
  CHECK(third.next.clients[0].held[1].owner == 0x9a);
}

TEST_CASE("a ledger written before --clients existed still loads") {
  auto json = to_json(Ledger{});
  json.erase("clients");
  CHECK(ledger_from_json(json).clients.empty());
}

TEST_CASE("a step names the clients it cost their sessions, and is not healthy") {
  StepFacts step;
  step.server = "pzoo-0";
  step.restart_seen = true;
  step.healthy_streak = 3;
  step.stable = 3;
  CHECK(step_findings(step).empty());
  // Broker 9's session was created on server 1 (its id's top byte), the one the step restarted.
  step.clients_before = std::vector{brokers({{1, 0x0200000000000011}, {9, 0x0100000000000099}})};
  step.clients_after = std::vector{brokers({{1, 0x0200000000000011}, {9, 0x020000000000009a}})};
  step.servers_by_id = {{1, "pzoo-0"}, {2, "pzoo-1"}};
  step.downtime = std::chrono::milliseconds(7600);
  auto findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector<std::string>{"client-session-lost"});
  CHECK(findings[0].server == "pzoo-0");
  CHECK_THAT(findings[0].message, Contains("Kafka broker 9") && Contains("during the step on pzoo-0") &&
                                      Contains("was created on pzoo-0 (server id 1), which the step kept from "
                                               "serving for 7.6s"));
  CHECK_THAT(findings[0].message, !Contains("no leader"));
  step.longest_leaderless = std::chrono::milliseconds(1200);
  CHECK_THAT(step_findings(step)[0].message, Contains("the ensemble had no leader for 1.2s"));

  // Before COMMAND, cons said which registrations' sessions the server held: said last, as info.
  step.cons_before = ConsFacts{{{"127.0.0.1:5", 0x0100000000000099, std::chrono::milliseconds(4000)},
                                {"127.0.0.1:6", 0x0300000000000001, std::chrono::milliseconds(10000)}}};
  findings = step_findings(step);
  REQUIRE(codes(findings) == std::vector<std::string>{"client-session-lost", "clients-on-server"});
  CHECK(findings[1].severity == Severity::info);
  CHECK_THAT(findings[1].message, Contains("pzoo-0, about to restart, holds the sessions of Kafka broker 9 "
                                           "(/brokers/ids/9) with session 0x100000000000099 (timeout 4.0s)"));
  CHECK_THAT(findings[1].message, !Contains("broker 1"));
  // The lost session's own finding weighs its timeout against the downtime.
  CHECK_THAT(findings[0].message, Contains("before the step its connection was on pzoo-0, with a session timeout of "
                                           "4.0s, shorter than pzoo-0's downtime"));
  step.downtime = std::chrono::milliseconds(3000);
  CHECK_THAT(step_findings(step)[0].message, Contains("with a session timeout of 4.0s;") && !Contains("shorter than"));
  CHECK(step_verdict(Report{}, findings, {}) == Verdict::degraded);
}

TEST_CASE("the sidecar follows the registrations from cycle to cycle: log lines and counters by path") {
  SidecarBook book("pzoo-0", std::chrono::seconds(10), std::chrono::seconds(5), Clock::now());
  auto cycle = [&](std::vector<ClientPathRead> reads) {
    CycleResult result;
    result.report = judge(healthy_five());
    result.report.clients = std::move(reads);
    return book.cycle_ended(std::move(result), Clock::now());
  };
  cycle({brokers({{1, 0x11}, {2, 0x12}}), controller(1, 0x11)});
  CHECK(book.status().clients.at("/brokers/ids").renewed == 0);
  // Broker 2 registered again under a new session; then the path could not be read (says nothing);
  // then broker 1 is gone, compared with the last look that read it.
  auto lines = cycle({brokers({{1, 0x11}, {2, 0x22}}), controller(1, 0x11)});
  REQUIRE(std::ranges::count_if(lines, [](const auto& line) { return line.starts_with("client-session-lost: "); }) ==
          1);
  cycle({{"/brokers/ids", ZkError::connection_loss, {}, ""}, controller(1, 0x11)});
  lines = cycle({brokers({{2, 0x22}}), controller(1, 0x11)});
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], StartsWith("client-gone: Kafka broker 1 (/brokers/ids/1)"));
  // Broker 1 back under a new session: that session was lost while it was gone.
  lines = cycle({brokers({{1, 0x31}, {2, 0x22}}), controller(1, 0x11)});
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], StartsWith("client-session-lost: Kafka broker 1 (/brokers/ids/1): held by session 0x11 "
                                  "before, by session 0x31 now"));
  CHECK(cycle({brokers({{1, 0x31}, {2, 0x22}}), controller(1, 0x11)}).empty());
  const auto& tally = book.status().clients;
  CHECK(tally.at("/brokers/ids").renewed == 2);
  CHECK(tally.at("/brokers/ids").gone == 1);
  CHECK(tally.at("/controller").renewed == 0);

  auto metrics = render_metrics(book.status());
  CHECK_THAT(metrics, Contains("zkverify_client_registrations{path=\"/brokers/ids\"} 2\n") &&
                          Contains("zkverify_client_registrations{path=\"/controller\"} 1\n") &&
                          Contains("zkverify_client_registrations_renewed_total{path=\"/brokers/ids\"} 2\n") &&
                          Contains("zkverify_client_registrations_gone_total{path=\"/brokers/ids\"} 1\n"));
  // Without --clients, none of these families.
  SidecarBook plain("pzoo-0", std::chrono::seconds(10), std::chrono::seconds(5), Clock::now());
  CHECK_THAT(render_metrics(plain.status()), !Contains("zkverify_client_"));
}

TEST_CASE("watch --clients: each change from the last look said as it is seen, held again told from new") {
  auto first = std::vector{brokers({{1, 0x11}, {2, 0x22}})};
  auto gone = std::vector{brokers({{1, 0x11}})};
  auto events = client_events(first, first, gone);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == WatchEventKind::client_gone);
  CHECK(events[0].detail == "Kafka broker 2 (/brokers/ids/2): gone (it was held by session 0x22)");
  CHECK(to_string(events[0].kind) == "client-gone");

  // Back under a new session, beside a broker the watch never saw before.
  events = client_events(first, gone, {brokers({{1, 0x11}, {2, 0x2f}, {7, 0x77}})});
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == WatchEventKind::client_back);
  CHECK_THAT(events[0].detail, Contains("broker 2") && Contains("new session 0x2f; session 0x22 ended"));
  CHECK(events[1].kind == WatchEventKind::client_new);
  CHECK(events[1].detail == "Kafka broker 7 (/brokers/ids/7): held by session 0x77");

  // Replaced between two looks (never seen missing): the session before it ended, not the first look's.
  events = client_events(first, {brokers({{1, 0x11}, {2, 0x2f}})}, {brokers({{1, 0x11}, {2, 0x30}})});
  REQUIRE(events.size() == 1);
  CHECK_THAT(events[0].detail, Contains("new session 0x30; session 0x2f ended"));
  CHECK(client_events(first, first, first).empty());
}
