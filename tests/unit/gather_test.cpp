// gather(): the probes and the round trip together, on fake peers and the fake keeper.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>

#include "fake_keeper.hpp"
#include "fake_peer.hpp"
#include "model/render/timeline_view.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"
#include "verifier/check/ensemble_check.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using ::fake::Behaviour;
using Peer = ::fake::Peer;
using Script = ::fake::Script;
using zkverify::fake::Ensemble;
using zkverify::fake::OpKind;
using namespace std::chrono_literals;

namespace {

std::map<std::string, Script> answers(const std::string& role) {
  return {{"srvr", {Behaviour::answer, capture("srvr_" + role + ".txt")}},
          {"conf", {Behaviour::answer, capture("conf_" + role + ".txt")}},
          {"mntr", {Behaviour::answer, capture("mntr_" + role + ".txt")}}};
}

}  // namespace

TEST_CASE("gather: quorum's round trip starts once every srvr is in, while the leader's mntr is still coming") {
  Ensemble ensemble;
  std::atomic<int> creates_before_mntr{-1};
  auto leader_answers = answers("leader");
  auto& mntr = leader_answers.at("mntr");
  mntr.behaviour = Behaviour::answer_late;
  mntr.every = 1000ms;  // far longer than the round trip on the fake keeper takes
  mntr.before_reply = [&] { creates_before_mntr = ensemble.operations(OpKind::create); };
  Peer leader(std::move(leader_answers));
  Peer follower_a(answers("follower"));
  Peer follower_b(answers("follower"));

  zkverify::verifier::EnsembleOptions options;
  options.servers = {{"a", "127.0.0.1", follower_a.port(), {}},
                     {"leader", "127.0.0.1", leader.port(), {}},
                     {"b", "127.0.0.1", follower_b.port(), {}}};
  options.verdict_words_only = true;
  auto facts = zkverify::verifier::gather(options, test_executor(), ensemble.factory(), nullptr);

  CHECK(creates_before_mntr >= 1);  // the probe node was written before mntr answered
  REQUIRE(facts.round_trip);
  CHECK(facts.round_trip->writer == "leader");
  CHECK(facts.round_trip->write_error == ZkError::ok);
  REQUIRE(facts.round_trip->reads.size() == 3);
  for (const auto& read : facts.round_trip->reads) {
    INFO(read.server);
    CHECK(read.error == ZkError::ok);
    CHECK(read.bytes_match);
  }
  // The probes were awaited all the same: the late mntr is among the facts.
  REQUIRE(facts.probes.size() == 3);
  CHECK(facts.probes[1].address.name == "leader");
  REQUIRE(facts.probes[1].mntr);
  CHECK(facts.probes[1].mntr->facts.synced_followers == 4);
  CHECK(facts.timings.probe >= 1000ms);
  CHECK(ensemble.sessions_open() == 0);
  CHECK(leader.max_concurrent() <= 2);

  // --trace's timeline shows the same overlap: the leader's mntr ended after the write (when it began is
  // the probes' business: after conf's answer, which may come after the write began).
  auto timeline = timeline_of(facts.started, facts.probes, facts.round_trip);
  auto step = [&](const std::string& server, const std::string& what) {
    auto found = std::ranges::find_if(timeline.steps,
                                      [&](const TimedStep& one) { return one.server == server && one.what == what; });
    REQUIRE(found != timeline.steps.end());
    CHECK(found->begin >= facts.started);
    CHECK(found->begin <= found->end);
    return *found;
  };
  for (const auto* name : {"a", "leader", "b"}) {
    INFO(name);
    CHECK(step(name, "srvr: connect").end <= step(name, "srvr").begin);
    CHECK(step(name, "session: sync and read").begin >= step("leader", "session: write").end);
  }
  CHECK(step("leader", "mntr").end > step("leader", "session: write").end);
  CHECK(std::ranges::is_sorted(timeline.steps, {}, &TimedStep::begin));
}

TEST_CASE("gather: with every word asked (not quorum), sessions start after the probes, one connection at a time") {
  Ensemble ensemble;
  std::atomic<int> sessions_before_last_word{-1};
  auto leader_answers = answers("leader");
  leader_answers["ruok"] = {Behaviour::answer, "imok"};  // the last optional word
  leader_answers["ruok"].before_reply = [&] { sessions_before_last_word = ensemble.sessions_opened(); };
  Peer leader(std::move(leader_answers));

  zkverify::verifier::EnsembleOptions options;
  options.servers = {{"leader", "127.0.0.1", leader.port(), {}}};
  auto facts = zkverify::verifier::gather(options, test_executor(), ensemble.factory(), nullptr);

  CHECK(sessions_before_last_word == 0);
  REQUIRE(facts.round_trip);
  CHECK(facts.round_trip->write_error == ZkError::ok);
  CHECK(leader.max_concurrent() == 1);
}
