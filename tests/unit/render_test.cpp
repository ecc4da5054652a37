#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "synthetic.hpp"
#include "verifier/judge/checks.hpp"
#include "verifier/render/report_view.hpp"

using namespace zkverify::verifier;
using Catch::Matchers::Contains;

TEST_CASE("JSON carries the documented fields") {
  auto facts = synthetic::healthy_five();
  facts.probes[4] = synthetic::unreachable("zoo-1");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto json = nlohmann::json::parse(render_json(judge(facts)));
  CHECK(json["verdict"] == "degraded");
  CHECK(json["leader"] == "pzoo-1");
  REQUIRE(json["servers"].size() == 5);
  const auto& first = json["servers"][0];
  for (const char* key : {"name", "id", "mode", "zxid", "epoch", "latency_ms", "node_count", "error"}) CHECK(first.contains(key));
  CHECK(first["zxid"] == "0x100000007");
  CHECK(first["epoch"] == 1);
  CHECK(first["id"] == 1);
  CHECK(first["error"].is_null());
  CHECK(json["servers"][4]["error"] == "connection refused");
  CHECK(json["servers"][4]["zxid"].is_null());
  const auto& finding = json["findings"][0];
  for (const char* key : {"severity", "code", "server", "message"}) CHECK(finding.contains(key));
  CHECK(json["round_trip"]["writer"] == "pzoo-1");
}

TEST_CASE("JSON leader is null unless exactly one leads") {
  auto facts = synthetic::healthy_five();
  facts.probes[0].srvr->facts.mode = zkverify::probes::Mode::leader;
  CHECK(to_json(judge(facts))["leader"].is_null());
}

TEST_CASE("text: a headline, one row per server, the findings") {
  auto facts = synthetic::healthy_five();
  facts.probes[2] = synthetic::unreachable("pzoo-2");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto text = render_text(judge(facts));
  CHECK_THAT(text, Contains("degraded: leader pzoo-1, 4/5 voters serving, round trip via pzoo-1 read back on 4/4"));
  CHECK_THAT(text, Contains("NAME"));
  CHECK_THAT(text, Contains("pzoo-2"));
  CHECK_THAT(text, Contains("unreachable"));
  CHECK_THAT(text, Contains("0x100000007"));
  CHECK_THAT(text, Contains("findings:"));
  CHECK_THAT(text, Contains("warning   unreachable"));
}

TEST_CASE("text: a server that is not serving but says imok shows both") {
  auto facts = synthetic::healthy_five();
  facts.probes[3] = synthetic::not_serving("zoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  CHECK_THAT(render_text(judge(facts)), Contains("not currently serving requests; ruok says imok, but it is not serving"));
}

TEST_CASE("JSON output never aborts on bytes that are not UTF-8: they are replaced") {
  auto facts = synthetic::healthy_five();
  facts.probes[2] = synthetic::unreachable("pzoo-2");
  facts.probes[2].srvr_exchange.error = zkverify::probes::ProbeError::read_timeout;
  facts.probes[2].srvr_exchange.reply = "Zookeeper \xff\xfe version";  // half a reply, from a peer we do not control
  auto report = judge(facts);
  report.servers[2].error = "reply \xff\xfe\xc3";
  std::string text;
  REQUIRE_NOTHROW(text = render_json(report));
  auto parsed = nlohmann::json::parse(text);
  CHECK(parsed["servers"][2]["error"] == "reply \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD each
}
