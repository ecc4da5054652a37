#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/checks.hpp"
#include "model/render/report_view.hpp"
#include "model/render/timeline_view.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;

namespace {

// The keys of a JSON object, sorted (nlohmann's objects are ordered by key).
std::vector<std::string> keys_of(const nlohmann::json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

// README's types: "int" and "int|null", "string|null", "number|null", "object|null", ...
bool has_type(const nlohmann::json& value, std::string_view type) {
  if (value.is_null() && type.ends_with("|null")) return true;
  if (type.ends_with("|null")) type.remove_suffix(5);
  if (type == "int") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return false;
}

void check_types(const nlohmann::json& object, const std::map<std::string, std::string>& types) {
  std::vector<std::string> documented;
  for (const auto& [key, type] : types) documented.push_back(key);
  CHECK(keys_of(object) == documented);  // exactly the documented keys, none more
  for (const auto& [key, type] : types) {
    INFO(key << " is " << object[key].dump() << ", documented as " << type);
    CHECK(has_type(object[key], type));
  }
}

// README's keys of a server's object, and their types.
const std::map<std::string, std::string> kServerTypes{{"name", "string"},
                                                      {"address", "string"},
                                                      {"id", "int|null"},
                                                      {"mode", "string"},
                                                      {"zxid", "string|null"},
                                                      {"epoch", "int|null"},
                                                      {"latency_ms", "number|null"},
                                                      {"node_count", "int|null"},
                                                      {"connections", "int|null"},
                                                      {"ephemerals", "int|null"},
                                                      {"version", "string|null"},
                                                      {"error", "string|null"},
                                                      {"note", "string|null"},
                                                      {"tls", "object|null"}};

}  // namespace

TEST_CASE("JSON: exactly README's keys, of README's types", "[render]") {
  auto facts = synthetic::healthy_five();
  facts.probes[4] = synthetic::unreachable("zoo-1");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto json = nlohmann::json::parse(render_json(judge(facts)));
  check_types(json, {{"verdict", "string"},
                     {"leader", "string|null"},
                     {"expected_voters", "int"},
                     {"serving_voters", "int"},
                     {"membership_views", "array"},
                     {"servers", "array"},
                     {"findings", "array"},
                     {"round_trip", "object|null"},
                     {"timings_ms", "object|null"},
                     {"tls", "object|null"}});
  CHECK(json["verdict"] == "degraded");
  CHECK(json["tls"].is_null());         // plain TCP
  CHECK(json["timings_ms"].is_null());  // facts nobody timed
  REQUIRE(json["servers"].size() == 5);
  for (const auto& server : json["servers"]) check_types(server, kServerTypes);
  // The serving server has every value; the unreachable one has only its name, address, mode and error.
  for (const char* key : {"id", "zxid", "epoch", "latency_ms", "node_count"}) {
    CHECK_FALSE(json["servers"][0][key].is_null());
    CHECK(json["servers"][4][key].is_null());
  }
  CHECK(json["servers"][4]["mode"] == "unreachable");
  REQUIRE_FALSE(json["findings"].empty());
  for (const auto& finding : json["findings"])
    check_types(finding,
                {{"severity", "string"}, {"code", "string"}, {"server", "string|null"}, {"message", "string"}});
  check_types(json["round_trip"], {{"writer", "string"},
                                   {"path", "string|null"},
                                   {"write_zxid", "string|null"},
                                   {"reads_ok", "int"},
                                   {"reads_attempted", "int"}});

  facts.round_trip.reset();
  facts.write_skipped = true;
  CHECK(to_json(judge(facts))["round_trip"].is_null());  // "null with --no-write"

  auto timed = judge(facts);
  timed.timings.emplace();
  check_types(to_json(timed)["timings_ms"], {{"probe", "int"},
                                             {"connect", "int"},
                                             {"write", "int"},
                                             {"read_back", "int"},
                                             {"cleanup", "int"},
                                             {"total", "int"}});
}

namespace {

zkverify::PhaseTimings sample_timings() {
  using std::chrono::microseconds;
  zkverify::PhaseTimings timings;
  timings.probe = microseconds(8'900);  // whole milliseconds, rounded down: 8
  timings.connect = microseconds(3'000);
  timings.write = microseconds(4'999);
  timings.read_back = microseconds(6'001);
  timings.cleanup = microseconds(20'000);
  timings.total = microseconds(41'500);
  return timings;
}

}  // namespace

TEST_CASE("JSON timings_ms: each phase in whole milliseconds", "[render]") {
  auto report = judge(synthetic::healthy_five());
  report.timings = sample_timings();
  auto json = nlohmann::json::parse(render_json(report));
  CHECK(json["timings_ms"] ==
        nlohmann::json{{"probe", 8}, {"connect", 3}, {"write", 4}, {"read_back", 6}, {"cleanup", 20}, {"total", 41}});
}

TEST_CASE("text timings: one line, the phases in the order they run", "[render]") {
  CHECK(render_timings_text(sample_timings()) ==
        "timings: probe 8ms, connect 3ms, write 4ms, read_back 6ms, cleanup 20ms, total 41ms\n");
  zkverify::PhaseTimings none;
  CHECK(render_timings_text(none) ==
        "timings: probe 0ms, connect 0ms, write 0ms, read_back 0ms, cleanup 0ms, total 0ms\n");
  auto report = judge(synthetic::healthy_five());
  report.timings = sample_timings();
  CHECK_THAT(render_text(report), !Contains("timings:"));  // only with --verbose, which the command adds
}

TEST_CASE("JSON carries the documented fields") {
  auto facts = synthetic::healthy_five();
  facts.probes[4] = synthetic::unreachable("zoo-1");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto json = nlohmann::json::parse(render_json(judge(facts)));
  CHECK(json["verdict"] == "degraded");
  CHECK(json["leader"] == "pzoo-1");
  REQUIRE(json["servers"].size() == 5);
  const auto& first = json["servers"][0];
  for (const char* key : {"name", "id", "mode", "zxid", "epoch", "latency_ms", "node_count", "error"})
    CHECK(first.contains(key));
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
  facts.probes[0].srvr->facts.mode = zkverify::Mode::leader;
  CHECK(to_json(judge(facts))["leader"].is_null());
}

// A count of nothing says nothing: a round trip that read nowhere says how far it got.
TEST_CASE("text: a round trip that read nowhere says so, never 'read back on 0/0'") {
  auto facts = synthetic::healthy_five();
  facts.round_trip->write_error = ZkError::deadline_exceeded;
  facts.round_trip->write_zxid.reset();
  facts.round_trip->reads.clear();
  auto text = render_text(judge(facts));
  CHECK_THAT(text, Contains("round trip via pzoo-1: the write was not committed") && !Contains("0/0"));
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

  // The table: a header, then five rows in list order, each starting with its server's name.
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto header = std::ranges::find_if(lines, [](const std::string& line) { return line.starts_with("NAME"); });
  REQUIRE(header != lines.end());
  REQUIRE(lines.end() - header > 5);
  const char* names[] = {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"};
  for (int i = 0; i < 5; ++i) {
    const auto& row = *(header + 1 + i);
    INFO(row);
    CHECK(row.starts_with(std::string(names[i]) + " "));
    CHECK_THAT(row, Contains(i == 2 ? "unreachable" : (i == 1 ? "leader" : "follower")));
  }
  auto after_rows = *(header + 6);
  CHECK_FALSE(std::ranges::any_of(names, [&](const char* name) { return after_rows.starts_with(name); }));
}

TEST_CASE("text: a server that is not serving but says imok shows both") {
  auto facts = synthetic::healthy_five();
  facts.probes[3] = synthetic::not_serving("zoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  CHECK_THAT(render_text(judge(facts)),
             Contains("not currently serving requests; ruok says imok, but it is not serving"));
}

TEST_CASE("JSON output never aborts on bytes that are not UTF-8: they are replaced") {
  auto facts = synthetic::healthy_five();
  facts.probes[2] = synthetic::unreachable("pzoo-2");
  facts.probes[2].srvr_exchange.error = zkverify::ProbeError::read_timeout;
  facts.probes[2].srvr_exchange.reply = "Zookeeper \xff\xfe version";  // half a reply, from a peer we do not control
  auto report = judge(facts);
  report.servers[2].error = "reply \xff\xfe\xc3";
  std::string text;
  REQUIRE_NOTHROW(text = render_json(report));
  auto parsed = nlohmann::json::parse(text);
  CHECK(parsed["servers"][2]["error"] == "reply \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // U+FFFD each
}

TEST_CASE("timeline: an exchange's connect, TLS handshake and reply, in the order they began, in ms", "[render]") {
  using std::chrono::microseconds;
  Clock::time_point origin{std::chrono::seconds(100)};
  auto at = [&](long micros) { return origin + microseconds(micros); };
  Exchange tls_srvr;
  tls_srvr.started = at(200);
  tls_srvr.connected = at(1200);
  tls_srvr.secured = at(9250);
  tls_srvr.tls_resumed = true;
  tls_srvr.ended = at(10000);
  ServerProbe probe;
  probe.address.name = "pzoo-0";
  probe.steps = steps_of("pzoo-0", "srvr", tls_srvr);
  REQUIRE(probe.steps.size() == 3);
  CHECK(steps_of("zoo-0", "conf", Exchange{}).empty());  // never started: no steps

  RoundTrip trip;
  trip.steps = {{"", "sessions closed", at(12000), at(15000)}, {"zoo-1", "session: write", at(100), at(11000)}};
  auto timeline = timeline_of(origin, {probe}, trip);
  std::vector<std::string> order;
  for (const auto& step : timeline.steps) order.push_back(step.what);
  CHECK(order == std::vector<std::string>{"session: write", "srvr: connect", "srvr: TLS handshake (resumed)", "srvr",
                                          "sessions closed"});
  auto text = render_timeline_text(timeline);
  CHECK_THAT(text, Contains("      1.2 -     9.3    8.1  pzoo-0  srvr: TLS handshake (resumed)\n"));
  CHECK_THAT(text, Contains("     12.0 -    15.0    3.0  -       sessions closed\n"));
  auto json = timeline_json(timeline);
  REQUIRE(json.size() == 5);
  CHECK(json[1] == nlohmann::json{{"server", "pzoo-0"}, {"step", "srvr: connect"}, {"start_ms", 0.2}, {"end_ms", 1.2}});
  CHECK(json[4]["server"].is_null());
}
