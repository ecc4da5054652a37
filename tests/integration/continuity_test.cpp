// Continuity across upgrade steps against a real ensemble: the ledger, the durability marker,
// --wait, zkverify order and zkverify safe-to-restart.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

using Catch::Matchers::Contains;
using lab::zkverify;

namespace {

int count_findings(const nlohmann::json& report, const std::string& code) {
  int n = 0;
  for (const auto& f : report["findings"]) n += f["code"] == code;
  return n;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

struct Scratch {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("zkverify-state-" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string file(const std::string& name) const { return (dir / name).string(); }
};

const char* kWait = "--wait 90s --interval 500ms";

// order --output json: {order, servers: [{name, reason}], verdict}, in the text's order `names`.
void check_order_json(const std::string& servers, const std::vector<std::string>& names) {
  auto order_json = zkverify("order --output json --servers " + servers);
  INFO(order_json);
  CHECK(order_json.exit_code == 0);
  CHECK(order_json.err.empty());  // healthy: no warning
  const auto& as_json = order_json.json();
  std::vector<std::string> keys;
  for (const auto& item : as_json.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"order", "servers", "verdict"});
  CHECK(as_json["verdict"] == "healthy");
  REQUIRE(as_json["order"].size() == 5);
  REQUIRE(as_json["servers"].size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    INFO(as_json["servers"][i].dump());
    CHECK(as_json["order"][i] == names[i]);  // the same order as the text
    CHECK(as_json["servers"][i]["name"] == names[i]);
    CHECK(as_json["servers"][i].size() == 2);
    CHECK(as_json["servers"][i]["reason"].is_string());
    CHECK_FALSE(as_json["servers"][i]["reason"].get<std::string>().empty());
  }
  CHECK_THAT(as_json["servers"][4]["reason"].get<std::string>(), Contains("leader"));
}

// Waiting does not help against data loss, and it says so at once: one attempt (within its 5s
// default timeout, not --wait's 90s), the line that says why, the report of that attempt.
void check_wait_gives_up_on_data_loss(const std::string& quorum) {
  auto waited = zkverify(quorum + " " + kWait);
  INFO(waited.err);
  CHECK(waited.exit_code == 2);
  CHECK(waited.elapsed < std::chrono::seconds(5 + 2));
  CHECK_THAT(waited.err, Contains("attempt 1: critical (data-loss"));
  CHECK_THAT(waited.err, Contains("zkverify: data loss: not waiting any longer"));
  CHECK_FALSE(waited.err.find("attempt 2") != std::string::npos);
  CHECK(waited.json()["verdict"] == "critical");
}

}  // namespace

TEST_CASE("ledger: restarts of a persistent server, a wiped one and the leader stay healthy",
          "[integration][part:continuity]") {
  auto& ensemble = lab::shared();
  Scratch scratch;
  auto state = scratch.file("ledger.json");
  auto quorum = "quorum --output json --servers " + ensemble.servers() + " --state " + state;

  auto first = zkverify(quorum);
  INFO(first);
  REQUIRE(first.exit_code == 0);
  CHECK(lab::find_finding(first.json(), "marker-recorded"));
  auto ledger = read_json(state);
  CHECK(ledger["format"] == "zkverify-ledger/1");
  CHECK(ledger["marker"]["path"] == "/zkverify/marker");
  CHECK(ledger["servers"].size() == 5);
  auto first_epoch = ledger["high_epoch"].get<int>();

  auto leader = ensemble.leader();
  std::string persistent = leader == "pzoo-0" ? "pzoo-1" : "pzoo-0";
  std::string wiped = leader == "zoo-0" ? "zoo-1" : "zoo-0";
  for (const auto& name : {persistent, wiped, leader}) {
    ensemble.act("restart", name);
    auto run = zkverify(quorum + " " + kWait);
    INFO("after restarting " << name << ": " << run.out << run.err);
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.err, Contains("healthy 3/3 in a row"));
    CHECK(count_findings(run.json(), "data-loss") == 0);
    // Seen before and back again: it has caught up, because it read the round trip's write after sync.
    // Every one of the five read it (a read that failed or was stale is a critical finding naming it).
    CHECK(run.json()["round_trip"]["reads_ok"] == 5);
    CHECK(run.json()["round_trip"]["reads_attempted"] == 5);
  }
  // The leader's restart made an election: a new epoch, which is progress, not an error.
  CHECK(read_json(state)["high_epoch"].get<int>() > first_epoch);
  CHECK(read_json(state)["leader"] != leader);
}

TEST_CASE("data loss: all servers restarted with wiped data is critical until --reset-state",
          "[integration][promises][part:continuity]") {
  auto& ensemble = lab::shared();
  Scratch scratch;
  auto state = scratch.file("ledger.json");
  auto quorum = "quorum --output json --servers " + ensemble.servers() + " --state " + state;
  REQUIRE(zkverify(quorum).exit_code == 0);
  REQUIRE(zkverify(quorum).exit_code == 0);  // some history: the zxid moves on
  auto high_before = read_json(state)["high_zxid"].get<std::string>();

  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}) {
    ensemble.act("stop", name);
    ensemble.act("wipe", name);
  }
  for (const char* name : {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"}) ensemble.act("start", name);
  ensemble.act("wait");

  // Reads alone tell: with --no-write the marker is still read through every server, and nothing is written.
  auto read_only = zkverify(quorum + " --no-write");
  INFO(read_only);
  CHECK(read_only.exit_code == 2);
  CHECK(count_findings(read_only.json(), "data-loss") == 2);
  for (const auto& server : read_only.json()["servers"]) CHECK(server["node_count"] == 5);  // a fresh tree, untouched

  auto run = zkverify(quorum);
  INFO(run);
  CHECK(run.exit_code == 2);
  auto report = run.json();
  CHECK(report["verdict"] == "critical");
  CHECK(report["serving_voters"] == 5);  // the ensemble itself looks perfectly healthy
  REQUIRE(count_findings(report, "data-loss") == 2);
  std::string all;
  for (const auto& f : report["findings"]) all += f["message"].get<std::string>() + "\n";
  CHECK_THAT(all, Contains("zxid went backwards: " + high_before));
  CHECK_THAT(all, Contains("/zkverify/marker"));
  CHECK_THAT(all, Contains("is gone on pzoo-0, pzoo-1, pzoo-2, zoo-0, zoo-1"));
  CHECK(read_json(state)["high_zxid"] == high_before);  // the old high-water mark is kept

  auto again = zkverify(quorum);
  CHECK(again.exit_code == 2);
  CHECK_THAT((*lab::find_finding(again.json(), "data-loss"))["message"].get<std::string>(),
             Contains("until --reset-state"));
  check_wait_gives_up_on_data_loss(quorum);

  auto reset = zkverify(quorum + " --reset-state");
  INFO(reset.err);
  CHECK(reset.exit_code == 0);
  // It names what it forgets: the high zxid, the marker, the alarm.
  CHECK_THAT(reset.err, Contains("--reset-state: forgetting the ledger " + state + ": high zxid 0x"));
  CHECK_THAT(reset.err, Contains("marker /zkverify/marker (czxid 0x"));
  CHECK_THAT(reset.err, Contains("the data-loss alarm raised at "));
  CHECK(zkverify(quorum).exit_code == 0);
}

namespace {

// `zkverify order`'s text: one name per line.
std::vector<std::string> order_of(const std::string& servers) {
  auto order = zkverify("order --servers " + servers);
  REQUIRE(order.exit_code == 0);
  std::vector<std::string> names;
  std::istringstream lines(order.out);
  for (std::string line; std::getline(lines, line);) names.push_back(line);
  return names;
}

// `name` approved by safe-to-restart in the round of `state`, restarted, and waited for.
void restart_approved(lab::Lab& ensemble, const std::string& servers, const std::string& name,
                      const std::string& state) {
  INFO(name);
  auto approved = zkverify("safe-to-restart " + name + " --servers " + servers + " --state " + state);
  INFO(approved.out);
  CHECK(approved.exit_code == 0);
  // Restarted as approved: the next check sees its srvr "Received" count start again, so the
  // approval is no longer in flight (it would otherwise count as going down).
  ensemble.act("restart", name);
  // Serving is not yet synced: on a busy machine the next check came before the leader counted it
  // (a fresh clone saw zoo-0 refused so). quorum without --state leaves the round alone.
  REQUIRE(zkverify("quorum --wait 60s --stable 1 --servers " + servers).exit_code == 0);
}

}  // namespace

TEST_CASE("order puts the leader last, and safe-to-restart guards the quorum and the leader",
          "[integration][promises][part:continuity]") {
  auto& ensemble = lab::shared();
  Scratch scratch;
  auto servers = ensemble.servers();
  // Settled first: after the data-loss case restarted every server, a follower still catching up is
  // rightly not proven in sync (safe-to-restart refused the leader for it once); the gate waits.
  REQUIRE(zkverify("quorum --wait 60s --servers " + servers).exit_code == 0);
  auto leader = ensemble.leader();

  auto names = order_of(servers);
  REQUIRE(names.size() == 5);
  CHECK(names.back() == leader);
  check_order_json(servers, names);

  auto safe = [&](const std::string& name, const std::string& extra = "") {
    return zkverify("safe-to-restart " + name + " --servers " + servers + " " + extra);
  };
  SECTION("the leader: safe when every follower is proven synced; in a recorded round, last") {
    auto without_round = safe(leader);
    CHECK(without_round.exit_code == 0);
    CHECK_THAT(without_round.out, Contains("An election follows; in a rolling restart the leader goes last"));
    auto state = scratch.file("round.json");
    for (std::size_t i = 0; i + 1 < names.size(); ++i) {
      restart_approved(ensemble, servers, names[i], state);
      if (i == 0) {
        auto refused = safe(leader, "--state " + state);
        CHECK(refused.exit_code == 1);
        CHECK_THAT(refused.out, Contains("is the leader; this restart round (--state) still has"));
      }
    }
    auto last = safe(leader, "--state " + state);
    INFO(last.out);
    CHECK(last.exit_code == 0);
    CHECK(read_json(state)["restarted_this_round"].empty());  // the round is complete
  }
  SECTION("two of five down: no further restart, but the down ones may be restarted") {
    std::vector<std::string> followers;
    for (const auto& name : names)
      if (name != leader) followers.push_back(name);
    ensemble.act("stop", followers[0]);
    ensemble.act("stop", followers[1]);
    auto refused = safe(followers[2]);
    INFO(refused.out);
    CHECK(refused.exit_code == 1);
    CHECK_THAT(refused.out, Contains("2 of 5 voters down or not proven synced: restarting " + followers[2]));
    CHECK(safe(followers[0]).exit_code == 0);  // it is down already: restarting it costs nothing
    auto down_first = zkverify("order --servers " + servers);
    CHECK(down_first.out.starts_with(followers[0] + "\n" + followers[1] + "\n"));
  }
  SECTION("a name that is not listed is a usage error") {
    auto run = safe("pzoo-9");
    CHECK(run.exit_code == 64);
    CHECK_THAT(run.err, Contains("'pzoo-9' is not in --servers"));
  }
}

TEST_CASE("--wait gives up at its deadline with a progress line per attempt", "[integration][part:continuity]") {
  auto& ensemble = lab::shared();
  auto paused = ensemble.leader() == "zoo-0" ? "zoo-1" : "zoo-0";
  ensemble.act("pause", paused);
  auto run = zkverify("quorum --servers " + ensemble.servers() + " --timeout 1s --wait 3s --interval 500ms");
  ensemble.act("resume", paused);
  INFO(run.err);
  CHECK(run.exit_code == 1);
  // Each attempt names the paused server. A loaded machine may add others' slow round trips in 1 s
  // (CI saw "read-back-failed zoo-1"; a fresh clone, attempt 2 critical with three round trips
  // failed), which this case is not about: so not which verdict, only that none was healthy.
  auto second = run.err.find("attempt 2: ");
  REQUIRE(second != std::string::npos);
  auto line = run.err.substr(second, run.err.find('\n', second) - second);
  CHECK_THAT(line, Contains("unreachable " + std::string(paused)) && !Contains("attempt 2: healthy"));
  CHECK_THAT(run.err, Contains("--wait 3.0s is over"));
}

TEST_CASE("state files: corrupt, locked, concurrent", "[integration][promises][part:continuity]") {
  auto& ensemble = lab::shared();
  Scratch scratch;
  auto quorum = "quorum --servers " + ensemble.servers() + " --timeout 2s --state ";

  auto corrupt = scratch.file("corrupt.json");
  std::ofstream(corrupt) << "{\"format\": \"zkverify-ledger/1\", \"high_zxid\": 7}";
  auto run = zkverify(quorum + corrupt);
  CHECK(run.exit_code == 64);
  CHECK_THAT(run.err, Contains(corrupt));
  CHECK_THAT(run.err, Contains("not a zkverify ledger"));
  CHECK(read_json(corrupt)["high_zxid"] == 7);  // never silently replaced

  auto locked = scratch.file("locked.json");
  auto held = scratch.file("held");  // the holder has the lock once this exists (bounded wait: 10 s)
  auto holder = "flock " + locked + ".lock sh -c 'touch " + held + "; sleep 5' & i=0; while [ ! -e " + held +
                " ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; ";
  auto blocked = lab::sh(holder + "$ZKVERIFY " + quorum + locked);
  CHECK(blocked.exit_code == 64);
  CHECK_THAT(blocked.err, Contains("is locked by another zkverify"));
  CHECK_FALSE(std::filesystem::exists(locked));

  // Two runs at once on one file: both succeed one after the other, the file is whole, and exactly
  // one of them is the first run (records the marker): without the lock both would read no ledger.
  auto shared = scratch.file("shared.json");
  auto first_out = scratch.file("first.out"), second_out = scratch.file("second.out");
  auto both = lab::sh("$ZKVERIFY " + quorum + shared + " --output json >" + first_out + " & $ZKVERIFY " + quorum +
                      shared + " --output json >" + second_out + " && wait $!");
  CHECK(both.exit_code == 0);
  CHECK(read_json(shared)["format"] == "zkverify-ledger/1");
  auto first_report = read_json(first_out), second_report = read_json(second_out);
  INFO(first_report.dump() << "\n" << second_report.dump());
  CHECK(count_findings(first_report, "marker-recorded") + count_findings(second_report, "marker-recorded") == 1);
  CHECK(count_findings(first_report, "data-loss") + count_findings(second_report, "data-loss") == 0);
  for (const auto& entry : std::filesystem::directory_iterator(scratch.dir))
    CHECK_FALSE(entry.path().filename().string().find(".tmp.") != std::string::npos);  // no temp files left
  std::filesystem::remove(first_out);
  std::filesystem::remove(second_out);
}
