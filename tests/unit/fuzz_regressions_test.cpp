// Every input that crashed a reader or broke its invariants under the fuzz targets (tests/fuzz/,
// scripts/fuzz.sh), inline, with the behaviour the fix gives it. fuzz_server_list found the first;
// the other two were spotted in review and confirmed by replaying them through fuzz_admin_json and
// fuzz_ledger (an uncaught type_error, and UBSan's float-cast-overflow) before the fix.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "model/facts/addresses.hpp"
#include "model/judge/ledger.hpp"
#include "model/parse/parsers.hpp"
#include "model/render/sidecar_pages.hpp"

using namespace zkverify;
using namespace std::string_literals;

TEST_CASE("fuzz_server_list: an unnamed entry whose host has a '/' is refused, as a named one is",
          "[fuzz][addresses]") {
  // Found by fuzz_server_list: the name of an unnamed entry is its host:port, and names become parts
  // of znode names (the watch's counters), where a '/' would make a path.
  auto list = "pzoo00.pzoo:2181,pzoo-3/o-2.pzo:2,pz.p\xeeoo:7728"s;
  CHECK_THROWS_WITH(parse_server_list(list), Catch::Contains("pzoo-3/o-2.pzo:2") && Catch::Contains("'/'"));
  CHECK_THROWS_AS(parse_server_list("a/b:2181"), std::invalid_argument);
  CHECK_THROWS_WITH(parse_server_list("zk-0=a/b:2181"), Catch::Contains("has a '/' in its host"));
  CHECK(parse_server_list("zk-0=a.b:2181").at(0).name == "zk-0");
}

TEST_CASE(
    "fuzz_admin_json: a voting_view member whose learner_type or client_address is no string is read, "
    "not thrown at",
    "[fuzz][parsers]") {
  // nlohmann's value(key, default) throws type_error when the key holds another type: out of a probe's
  // coroutine, that ended the whole check. A hostile AdminServer now costs only its own facts.
  auto view = parse_admin_voting_view(R"({"current_config":{"1":{"learner_type":5,"client_address":[1]}}})");
  REQUIRE(view.ok());
  REQUIRE(view.facts.members.size() == 1);
  CHECK(view.facts.members[0].role == "participant");
  CHECK(view.facts.members[0].client_address.empty());
}

TEST_CASE("fuzz_ledger: a number that is no whole number is a clear error, not undefined behaviour", "[fuzz][ledger]") {
  // nlohmann converts 1e300 to std::int64_t with a float-to-integer cast: undefined (UBSan).
  auto ledger = nlohmann::json::parse(R"({"format":"zkverify-ledger/1","updated":"x","high_zxid":"0x1",
      "node_count":1e300,"leader":null,"membership":[],"marker":null,"data_loss":null,"servers":{},
      "restarted_this_round":[]})");
  CHECK_THROWS_WITH(zkverify::ledger_from_json(ledger), Catch::Contains("'node_count' is not a whole number"));
  ledger["node_count"] = 7;
  ledger["servers"] = {
      {"zk-0", {{"id", 2.5}, {"high_zxid", "0x1"}, {"node_count", nullptr}, {"mode", "leader"}, {"last_seen", "x"}}}};
  CHECK_THROWS_WITH(zkverify::ledger_from_json(ledger), Catch::Contains("'servers.id' is not a whole number"));
  ledger["servers"]["zk-0"]["id"] = 2;
  CHECK(zkverify::ledger_from_json(ledger).servers.at("zk-0").id == 2);
}

TEST_CASE("fuzz_server_list and fuzz_sidecar_request: a '[' or ']' inside a host is refused", "[fuzz][addresses]") {
  // Found by both targets (CI's 5 s run): "[[]:2" was read as host "[" (everything before the first
  // ']'), which prints back as "[:2", an entry nobody can read again.
  CHECK_THROWS_WITH(parse_server_list("[[]:2"), Catch::Contains("'[' or ']' inside its host"));
  CHECK_THROWS_WITH(parse_server_list("zk=a]b:2181"), Catch::Contains("'[' or ']' inside its host"));
  CHECK(parse_server_list("[::1]:2181").at(0).host == "::1");
  CHECK_THROWS_WITH(parse_listen("[[]:5253"), Catch::Contains("'[' or ']' inside the host"));
  CHECK(parse_listen("[::]:9181").host == "::");
}
