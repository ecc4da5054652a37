// Server ids (model/judge/id_checks.cpp): what is proven wrong is critical, what may be one server
// listed twice or a server not yet added by a reconfig stays a warning.

#include <algorithm>

#include <catch2/catch.hpp>

#include "model/judge/checks.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;
using Catch::Matchers::Contains;

namespace {

// The seed's five on their own hosts (a Kubernetes headless Service's names), each reporting `ids[i]`
// and the list `count` servers long: server.N=HOST-OF-N:2888:3888.
EnsembleFacts named_five(const std::vector<int>& ids, int count = 5) {
  const std::vector<std::string> names{"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1", "zoo-2", "zoo-3"};
  auto facts = healthy_five();
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    facts.probes[i].address.host = names[i] + (i < 3 ? ".pzoo" : ".zoo");
    ConfFacts conf;
    for (int id = 1; id <= count; ++id) {
      auto host = names[id - 1] + (id <= 3 ? ".pzoo" : ".zoo") + ".kafka.svc.cluster.local";
      conf.members.push_back({id, host + ":2888", host + ":3888", "participant", ""});
    }
    conf.server_id = ids[i];
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  return facts;
}

}  // namespace

TEST_CASE("ids: every server at the host its list gives its id is healthy", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 4, 5}));
  CHECK(report.verdict == Verdict::healthy);
  CHECK_FALSE(find(report, "id-address-mismatch"));
  CHECK_FALSE(find(report, "duplicate-id"));
}

// ID_OFFSET wrong for the zoo StatefulSet: zoo-0 and zoo-1 say 3 and 4, one below their lines.
TEST_CASE("ids: a server listed at another id's host is critical, named, with both lines", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 3, 4}));
  CHECK(report.verdict == Verdict::critical);
  auto* zoo0 = find(report, "id-address-mismatch");
  REQUIRE(zoo0);
  CHECK(zoo0->severity == Severity::critical);
  CHECK(zoo0->server == "zoo-0");
  CHECK_THAT(zoo0->message, Contains("zoo-0 reports server id 3, but its list puts zoo-0.zoo at "
                                     "zoo-0.zoo.kafka.svc.cluster.local:2888 as server 4") &&
                                Contains("server 3 at pzoo-2.pzoo.kafka.svc.cluster.local:2888"));
  auto mismatched = std::ranges::count_if(report.findings,
                                          [](const Finding& f) { return f.code == FindingCode::id_address_mismatch; });
  CHECK(mismatched == 2);  // zoo-1 too (id 4 where its host is server 5's)
  // zoo-0 and pzoo-2 both say 3, with one list and one release: that alone does not prove two servers.
  REQUIRE(find(report, "duplicate-id"));
  CHECK(find(report, "duplicate-id")->severity == Severity::warning);
}

TEST_CASE("ids: an id with no server.N line, at a host that has one", "[ids]") {
  auto report = judge(named_five({1, 2, 3, 4, 9}));
  CHECK_THAT(find(report, "id-address-mismatch")->message, Contains("and has no server 9"));
  CHECK(find(report, "membership-unknown"));
}

TEST_CASE("ids: hosts that tell nothing are not compared", "[ids]") {
  SECTION("one address for all (a loopback lab): every line is at it") {
    auto facts = named_five({2, 1, 3, 4, 5});
    for (auto& probe : facts.probes) probe.address.host = "127.0.0.1";
    for (auto& probe : facts.probes)
      for (auto& member : probe.conf->facts.members) member.quorum_address = "127.0.0.1:" + std::to_string(member.id);
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
  SECTION("listed by IP address, listed by name: never equal") {
    auto facts = named_five({2, 1, 3, 4, 5});
    for (std::size_t i = 0; i < facts.probes.size(); ++i)
      facts.probes[i].address.host = "10.0.0." + std::to_string(i + 1);
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
  SECTION("a name that ends inside a label of another: pzoo-2.pz is not pzoo-2.pzoo") {
    auto facts = named_five({1, 2, 3, 4, 5});
    facts.probes[4].address.host = "pzoo-2.pz";  // zoo-1, id 5: the start of server 3's host only
    CHECK_FALSE(find(judge(facts), "id-address-mismatch"));
  }
}

TEST_CASE("ids: one id twice is critical only when they are provably two servers", "[ids]") {
  auto facts = healthy_five();
  for (std::size_t i = 0; i < facts.probes.size(); ++i) {
    ConfFacts conf;
    for (int id = 1; id <= 5; ++id) conf.members.push_back({id, "h:1", "h:2", "participant", ""});
    conf.server_id = i == 4 ? 4 : static_cast<int>(i) + 1;  // zoo-1 says 4, as zoo-0 does
    facts.probes[i].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  SECTION("one list, one release: perhaps one server listed twice") {
    auto report = judge(facts);
    auto* duplicate = find(report, "duplicate-id");
    REQUIRE(duplicate);
    CHECK(duplicate->severity == Severity::warning);
    CHECK_THAT(duplicate->message, Contains("or one server listed twice"));
  }
  SECTION("other releases") {
    facts.probes[4].srvr->facts.version = "3.9.3-abc, built on 2024";
    auto report = judge(facts);
    CHECK(report.verdict == Verdict::critical);
    CHECK_THAT(find(report, "duplicate-id")->message,
               Contains("server id 4 is reported by zoo-0 and zoo-1, and they are two servers (zoo-0 runs 3.8.0, "
                        "zoo-1 runs 3.9.3)"));
  }
  SECTION("other lists") {
    facts.probes[4].conf->facts.members.push_back({6, "h:1", "h:2", "participant", ""});
    auto report = judge(facts);
    CHECK(find(report, "duplicate-id")->severity == Severity::critical);
    CHECK_THAT(find(report, "duplicate-id")->message, Contains("zoo-0 and zoo-1 hold other lists"));
  }
}

// Seen on a real 3.8.0 ensemble with reconfigEnabled: a server started on a list that names it, to
// be added by reconfig, follows and reports the leader's list, without itself, until the reconfig.
TEST_CASE("ids: an id in no list is a warning, also where its own list is read", "[ids]") {
  auto facts = named_five({1, 2, 3, 4, 5});
  facts.probes[4].conf->facts.members.pop_back();  // zoo-1's own list stops at 4 (the others name 5)
  facts.probes[4].conf->facts.server_id = 6;
  auto report = judge(facts);
  auto* unknown = find(report, "membership-unknown");
  REQUIRE(unknown);
  CHECK(unknown->severity == Severity::warning);
  CHECK(unknown->server == "zoo-1");
}
