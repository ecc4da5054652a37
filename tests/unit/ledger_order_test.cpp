// The ledger's update is free steps (model/judge/ledger_steps.hpp), as the ensemble's checks are:
// run in any order, they find the same things and leave the same ledger. A step that read what
// another wrote (the data-loss record once kept the first loss a step happened to record) would
// differ under some order.

#include <algorithm>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>

#include "model/judge/ledger_steps.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using namespace synthetic;

namespace {

constexpr const char* kNow = "2026-11-30T12:00:00Z";

// A healthy ensemble on `epoch` whose round trip read the marker (`czxid`; none: gone everywhere).
EnsembleFacts marked(std::uint32_t epoch, std::optional<std::uint64_t> czxid) {
  auto facts = healthy_five();
  for (auto& probe : facts.probes) {
    probe.srvr->facts.zxid = Zxid{(std::uint64_t{epoch} << 32) | 5};
    probe.srvr->facts.node_count = 150;
  }
  facts.round_trip = round_trip(facts.probes, "pzoo-1", epoch);
  facts.round_trip->marker_path = "/zkverify/marker";
  for (auto& read : facts.round_trip->reads) {
    read.marker_error = czxid ? ZkError::ok : ZkError::no_node;
    if (czxid) read.marker_czxid = Zxid{*czxid};
    read.marker_data = "m";
  }
  ConfFacts conf;
  conf.members = {{1, "h:1", "h:2", "participant", ""}};
  facts.probes[0].conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  return facts;
}

// What earlier runs saw: epoch 3, 400 znodes, another leader and member, the marker, one approval.
Ledger earlier() {
  Ledger ledger;
  ledger.high_zxid = Zxid{0x300000009};
  ledger.node_count = 400;
  ledger.leader = "zoo-1";
  ledger.membership = {"server.9=h:1:2:participant;"};
  ledger.marker = Marker{"/zkverify/marker", Zxid{0x300000001}, "m"};
  ledger.in_flight["pzoo-0"] = Approval{"2026-11-30T11:55:00Z", false, std::nullopt};
  return ledger;
}

using Key = std::tuple<Severity, FindingCode, std::string, std::string>;

std::pair<std::vector<Key>, std::string> run_in(const EnsembleFacts& facts, const std::optional<Ledger>& previous,
                                                const std::vector<LedgerStep>& order) {
  auto report = judge(facts);
  const std::string now = kNow;
  LedgerRun run{facts, report, previous, now};
  auto draft = start_draft(run);
  for (auto step : order) step(run, draft);
  auto out = finish_draft(run, std::move(draft));
  std::vector<Key> keys;
  for (const auto& finding : out.findings)
    keys.emplace_back(finding.severity, finding.code, finding.server, finding.message);
  std::ranges::sort(keys);
  return {keys, to_json(out.next).dump()};
}

}  // namespace

TEST_CASE("the ledger's steps find the same and leave the same ledger in any order") {
  std::vector<std::pair<EnsembleFacts, std::optional<Ledger>>> runs{
      {marked(3, 0x300000001), std::nullopt},  // the first run: adopt the marker
      {marked(4, 0x300000001), earlier()},     // news: epoch, leader, membership, node count
      {marked(1, std::nullopt), earlier()},    // two losses at once: the zxid backwards, the marker gone
      {marked(1, 0x100000001), earlier()},     // the zxid backwards and the marker recreated
  };
  auto carried = earlier();
  carried.data_loss = DataLoss{"2026-11-29T00:00:00Z", "seen before"};
  runs.emplace_back(marked(1, std::nullopt), carried);  // the alarm carried, not recorded again
  std::vector<LedgerStep> order(ledger_steps().begin(), ledger_steps().end());
  std::mt19937 shuffle(20261206);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& [facts, previous] = runs[i];
    auto expected = run_in(facts, previous, order);
    INFO("run " << i);
    CHECK_FALSE(expected.first.empty());
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::ranges::shuffle(order, shuffle);
      CHECK(run_in(facts, previous, order) == expected);
    }
  }
  // The loss recorded when two are seen at once is the zxid's, whichever step ran first.
  auto both = run_in(runs[2].first, runs[2].second, order).second;
  CHECK(both.find("the ensemble's zxid went backwards") != std::string::npos);
}
