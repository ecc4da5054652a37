// The restart round's approvals in flight (issue 8, item 4): an approved server counts as going down
// for other approvals until it is seen down and back, step confirms it, or the lease runs out.

#include <catch2/catch.hpp>

#include "model/facts/time_text.hpp"
#include "model/judge/ledger.hpp"
#include "model/judge/restart_plan.hpp"
#include "model/judge/restart_round.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;
using std::chrono::system_clock;

namespace {

Report healthy_report() { return judge(healthy_five()); }

system_clock::time_point at(const char* iso) { return parse_iso8601(iso).value(); }

}  // namespace

TEST_CASE("iso8601 times read back, and anything else is refused") {
  auto when = at("2026-12-01T02:03:04Z");
  CHECK(iso8601(when) == "2026-12-01T02:03:04Z");
  CHECK(iso8601(at("2026-12-01T02:03:04.567Z"), true) == "2026-12-01T02:03:04.567Z");
  CHECK(at("2026-12-01T02:03:04.567Z") - when == std::chrono::milliseconds(567));
  for (const char* bad : {"", "2026-12-01 02:03:04Z", "2026-02-30T00:00:00Z", "2026-12-01T02:03:04",
                          "2026-12-01T25:00:00Z", "2026-12-01T02:03:04.5Z", "x026-12-01T02:03:04Z"})
    CHECK_FALSE(parse_iso8601(bad));
}

TEST_CASE("safe to restart: servers approved to others and not yet back count as going down") {
  auto report = healthy_report();                                // five synced voters, quorum 3
  CHECK(restart_safety(report, "pzoo-2", {}, {"pzoo-0"}).safe);  // 5 - 2 = 3 remain
  auto refused = restart_safety(report, "pzoo-2", {}, {"pzoo-0", "zoo-0"});
  CHECK_FALSE(refused.safe);
  CHECK(
      refused.reason ==
      "0 of 5 voters down or not proven synced: restarting pzoo-2 and pzoo-0, zoo-0 (approved to restart, not yet seen "
      "back) would leave 2 synced; a quorum needs 3");
  CHECK(restart_safety(report, "pzoo-2", {}, {"pzoo-2", "pzoo-0"}).safe);  // its own approval is not counted twice
}

TEST_CASE("approvals in flight: counted until seen down and back, or the lease ends") {
  Ledger ledger;
  approve_in_flight(ledger, Report{}, "pzoo-0", "2026-12-01T02:00:00Z");
  approve_in_flight(ledger, Report{}, "zoo-0", "2026-12-01T02:05:00Z");
  CHECK(going_down(ledger, "pzoo-2", at("2026-12-01T02:06:00Z")) == std::set<std::string>{"pzoo-0", "zoo-0"});
  CHECK(going_down(ledger, "zoo-0", at("2026-12-01T02:06:00Z")) == std::set<std::string>{"pzoo-0"});
  CHECK(going_down(ledger, "pzoo-2", at("2026-12-01T02:10:01Z")) == std::set<std::string>{"zoo-0"});  // lease over

  auto facts = healthy_five();
  facts.probes[0] = unreachable("pzoo-0");
  follow_approvals(ledger, judge(facts), "2026-12-01T02:06:00Z");  // pzoo-0 is down now
  REQUIRE(ledger.in_flight.contains("pzoo-0"));
  CHECK(ledger.in_flight.at("pzoo-0").seen_down);
  CHECK_FALSE(ledger.in_flight.at("zoo-0").seen_down);

  follow_approvals(ledger, healthy_report(), "2026-12-01T02:07:00Z");  // and back: done
  CHECK_FALSE(ledger.in_flight.contains("pzoo-0"));
  CHECK(ledger.in_flight.contains("zoo-0"));  // never seen down: still going down
  follow_approvals(ledger, healthy_report(), "2026-12-01T02:15:01Z");
  CHECK(ledger.in_flight.empty());  // its lease ended: an approval nobody acted on
}

TEST_CASE("approvals in flight: a restart between two checks shows as a lower srvr Received count") {
  auto report = healthy_report();
  report.servers[0].packets_received = 5000;  // pzoo-0 at the approval
  Ledger ledger;
  approve_in_flight(ledger, report, "pzoo-0", "2026-12-01T02:00:00Z");
  REQUIRE(ledger.in_flight.at("pzoo-0").received == 5000);
  report.servers[0].packets_received = 5400;  // still the same process: it only counts up
  follow_approvals(ledger, report, "2026-12-01T02:01:00Z");
  CHECK(ledger.in_flight.contains("pzoo-0"));
  report.servers[0].packets_received = 12;  // restarted, never seen down by a check
  follow_approvals(ledger, report, "2026-12-01T02:02:00Z");
  CHECK_FALSE(ledger.in_flight.contains("pzoo-0"));
  CHECK(ledger_from_json(to_json(Ledger{})).in_flight.empty());
}

TEST_CASE("a restart confirmed joins the round and is no longer in flight, and the round ends with the last") {
  auto report = healthy_report();
  Ledger ledger;
  approve_in_flight(ledger, Report{}, "pzoo-0", "2026-12-01T02:00:00Z");
  record_restarted(ledger, "pzoo-0", report.servers);
  CHECK(ledger.in_flight.empty());
  CHECK(ledger.restarted == std::set<std::string>{"pzoo-0"});
  for (const char* name : {"pzoo-1", "pzoo-2", "zoo-0"}) record_restarted(ledger, name, report.servers);
  CHECK(ledger.restarted.size() == 4);
  record_restarted(ledger, "zoo-1", report.servers);
  CHECK(ledger.restarted.empty());
}

TEST_CASE("the ledger keeps approvals in flight, and reads ledgers written before them") {
  Ledger ledger;
  ledger.updated = "2026-12-01T02:00:00Z";
  approve_in_flight(ledger, Report{}, "pzoo-0", "2026-12-01T02:00:00Z");
  ledger.in_flight["pzoo-0"].seen_down = true;
  auto json = to_json(ledger);
  CHECK(json["restarts_in_flight"]["pzoo-0"]["approved"] == "2026-12-01T02:00:00Z");
  auto back = ledger_from_json(json);
  REQUIRE(back.in_flight.contains("pzoo-0"));
  CHECK(back.in_flight.at("pzoo-0").seen_down);
  json.erase("restarts_in_flight");
  CHECK(ledger_from_json(json).in_flight.empty());
  CHECK_THAT(describe_forgotten(ledger), Contains("the restart of pzoo-0 approved at 2026-12-01T02:00:00Z"));
}
