// The sidecar's pages without sockets: routing, the responses, the Prometheus text (checked by
// the real promtool), the HTML status page's escaping, and --listen.

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/judge/checks.hpp"
#include "model/render/metrics.hpp"
#include "model/render/sidecar_pages.hpp"
#include "model/render/status_page.hpp"
#include "synthetic.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

SidecarStatus status_after_one_cycle(zkverify::EnsembleFacts facts, const std::string& local = "pzoo-0") {
  SidecarStatus status;
  status.local = local;
  CycleResult cycle;
  cycle.report = judge(facts);
  cycle.readiness = judge_readiness(cycle.report, local, facts.round_trip.has_value());
  cycle.checked_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'790'000'000));
  cycle.duration = std::chrono::milliseconds(42);
  cycle.round_trip_seconds = 0.0031;
  status.last = cycle;
  status.cycles = 7;
  return status;
}

PageContext alive_at(std::chrono::system_clock::time_point now) { return {true, now}; }

// Runs promtool check metrics on `text`; its exit status and what it said.
std::pair<int, std::string> promtool_check(const std::string& text) {
  auto dir = std::filesystem::temp_directory_path();
  auto input = dir / ("zkverify-metrics-" + std::to_string(::getpid()) + ".txt");
  auto output = dir / ("zkverify-promtool-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(input) << text;
  auto command = "timeout 20 promtool check metrics < " + input.string() + " > " + output.string() + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream said(output);
  std::string out((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
  std::filesystem::remove(input);
  std::filesystem::remove(output);
  return {WEXITSTATUS(status), out};
}

}  // namespace

TEST_CASE("routing: paths, methods, ?verbose", "[sidecar]") {
  CHECK(route("GET", "/livez").page == Page::livez);
  CHECK(route("GET", "/readyz").page == Page::readyz);
  CHECK_FALSE(route("GET", "/readyz").verbose);
  CHECK(route("GET", "/readyz?verbose").verbose);
  CHECK(route("GET", "/readyz?x=1&verbose=true").verbose);
  CHECK_FALSE(route("GET", "/readyz?verbosely").verbose);
  CHECK(route("GET", "/ensemble").page == Page::ensemble);
  CHECK(route("GET", "/metrics").page == Page::metrics);
  CHECK(route("GET", "/").page == Page::status);
  CHECK(route("GET", "/?anything").page == Page::status);
  CHECK(route("GET", "/readyz/").page == Page::not_found);
  CHECK(route("GET", "/favicon.ico").page == Page::not_found);
  CHECK(route("HEAD", "/readyz").page == Page::readyz);
  CHECK(route("HEAD", "/readyz").head);
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
    CHECK(route(method, "/readyz").page == Page::method_not_allowed);
}

TEST_CASE("responses: readyz 200/503 with verbose checks, livez from the loop alone", "[sidecar]") {
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'790'000'003));
  auto ready = status_after_one_cycle(synthetic::healthy_five());
  auto reply = respond(route("GET", "/readyz?verbose"), ready, alive_at(now));
  CHECK(reply.status == 200);
  CHECK(reply.body ==
        "[+]serving ok\n[+]epoch ok\n[+]synced ok\nsync proof: round-trip read after sync\nreadyz check passed\n");
  CHECK(respond(route("GET", "/readyz"), ready, alive_at(now)).body == "ok\n");
  auto stale = respond(route("GET", "/readyz?verbose"), ready, PageContext{false, now});
  CHECK(stale.status == 503);  // the last cycle was ready, but the loop stopped ending cycles
  CHECK_THAT(stale.body, StartsWith("[-]cycle failed: the last cycle ended more than 3 intervals + timeout ago\n"));
  CHECK_THAT(stale.body, Contains("readyz check failed\n"));

  auto facts = synthetic::healthy_five();
  facts.probes[0] = synthetic::unreachable("pzoo-0");
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto down = status_after_one_cycle(facts);
  reply = respond(route("GET", "/readyz?verbose"), down, alive_at(now));
  CHECK(reply.status == 503);
  CHECK_THAT(reply.body, StartsWith("[-]serving failed: pzoo-0 is unreachable"));
  CHECK_THAT(reply.body, Contains("\nreadyz check failed\n"));
  CHECK(respond(route("GET", "/livez"), down, alive_at(now)).status == 200);  // ZooKeeper down is no reason to restart
  CHECK(respond(route("GET", "/livez"), down, PageContext{false, now}).status == 503);

  SidecarStatus before_first_cycle;
  before_first_cycle.local = "pzoo-0";
  CHECK(respond(route("GET", "/readyz"), before_first_cycle, alive_at(now)).status == 503);
  CHECK(respond(route("GET", "/ensemble"), before_first_cycle, alive_at(now)).status == 503);
  CHECK(respond(route("GET", "/nope"), ready, alive_at(now)).status == 404);
  CHECK(respond(route("POST", "/readyz"), ready, alive_at(now)).status == 405);
}

TEST_CASE("/ensemble: quorum's JSON plus checked_at and age_ms", "[sidecar]") {
  auto status = status_after_one_cycle(synthetic::healthy_five());
  auto now = status.last->checked_at + std::chrono::milliseconds(2500);
  auto reply = respond(route("GET", "/ensemble"), status, alive_at(now));
  CHECK(reply.status == 200);
  CHECK(reply.content_type == "application/json");
  auto json = nlohmann::json::parse(reply.body);
  CHECK(json["verdict"] == "healthy");
  CHECK(json["leader"] == "pzoo-1");
  CHECK(json["servers"].size() == 5);
  CHECK(json["age_ms"] == 2500);
  CHECK(json["checked_at"] == "2026-09-21T14:13:20.000Z");
}

TEST_CASE("is_alive: 3 intervals + timeout since the last cycle ended", "[sidecar]") {
  auto began = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  using std::chrono::seconds;
  CHECK(is_alive(began, began + seconds(35), seconds(10), seconds(5)));
  CHECK_FALSE(is_alive(began, began + seconds(36), seconds(10), seconds(5)));
}

TEST_CASE("metrics: every family has HELP and TYPE, names as the issue lists, promtool accepts it", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.probes[4] = synthetic::unreachable("zoo-1");
  facts.probes[3].address.name = "weird\"name\\with\nnewline";
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  facts.probes[0].srvr->facts.connections = 12;
  MntrFacts mntr;
  mntr.server_state = "follower";
  mntr.ephemerals = 4;
  facts.probes[0].mntr = Reply<MntrFacts>{ProbeError::ok, mntr, ""};
  auto text = render_metrics(status_after_one_cycle(facts));
  INFO(text);
  for (const char* family :
       {"zkverify_build_info", "zkverify_up", "zkverify_cycles_total", "zkverify_cycle_duration_seconds",
        "zkverify_local_ready", "zkverify_verdict", "zkverify_server_up", "zkverify_server_serving",
        "zkverify_server_leader", "zkverify_server_zxid_epoch", "zkverify_server_latency_seconds",
        "zkverify_expected_voters", "zkverify_serving_voters", "zkverify_synced_followers",
        "zkverify_round_trip_seconds", "zkverify_findings", "zkverify_server_connections",
        "zkverify_server_ephemerals"}) {
    CHECK_THAT(text, Contains(std::string("# HELP ") + family + " "));
    CHECK_THAT(text, Contains(std::string("# TYPE ") + family + " "));
  }
  CHECK_THAT(text, Contains("zkverify_cycles_total 7\n"));
  CHECK_THAT(text, Contains("zkverify_local_ready 1\n"));
  CHECK_THAT(text, Contains("zkverify_verdict{verdict=\"degraded\"} 1\n"));
  CHECK_THAT(text, Contains("zkverify_verdict{verdict=\"healthy\"} 0\n"));
  CHECK_THAT(text, Contains("zkverify_server_up{server=\"zoo-1\"} 0\n"));
  CHECK_THAT(text, Contains("zkverify_server_leader{server=\"pzoo-1\"} 1\n"));
  CHECK_THAT(text, Contains("zkverify_server_latency_seconds{server=\"pzoo-0\"} 0.0015\n"));
  CHECK_THAT(text, Contains("zkverify_server_up{server=\"weird\\\"name\\\\with\\nnewline\"} 1\n"));
  CHECK_THAT(text, Contains("zkverify_round_trip_seconds 0.0031\n"));
  CHECK_THAT(text, Contains("zkverify_server_connections{server=\"pzoo-0\"} 12\n"));
  CHECK_THAT(text, Contains("zkverify_server_ephemerals{server=\"pzoo-0\"} 4\n"));
  CHECK_THAT(text, !Contains("zkverify_server_ephemerals{server=\"pzoo-2\"}"));  // no mntr: no sample
  auto [exit_status, said] = promtool_check(text);
  INFO(said);
  CHECK(exit_status == 0);
}

TEST_CASE("metrics before the first cycle: still valid, not up, not ready", "[sidecar]") {
  SidecarStatus status;
  status.local = "pzoo-0";
  auto text = render_metrics(status);
  CHECK_THAT(text, Contains("zkverify_up 0\n"));
  CHECK_THAT(text, Contains("zkverify_local_ready 0\n"));
  auto [exit_status, said] = promtool_check(text);
  INFO(said);
  CHECK(exit_status == 0);
}

TEST_CASE("metrics: --ensemble labels every series, first, and without it no series has the label", "[sidecar]") {
  auto facts = synthetic::healthy_five();
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto status = status_after_one_cycle(facts);
  CHECK_THAT(render_metrics(status), !Contains("ensemble="));
  status.ensemble = "kafka";
  auto text = render_metrics(status);
  INFO(text);
  int samples = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) continue;
    ++samples;
    auto name = line.substr(0, line.find_first_of("{ "));
    CHECK_THAT(line, StartsWith(name + "{ensemble=\"kafka\""));
  }
  CHECK(samples > 20);
  CHECK_THAT(text, Contains("zkverify_up{ensemble=\"kafka\"} 1\n"));
  CHECK_THAT(text, Contains("zkverify_server_leader{ensemble=\"kafka\",server=\"pzoo-1\"} 1\n"));
  auto [exit_status, said] = promtool_check(text);
  INFO(said);
  CHECK(exit_status == 0);
}

TEST_CASE("metrics: label values are escaped as the text format asks", "[sidecar]") {
  CHECK(escape_label_value("plain") == "plain");
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

TEST_CASE("status page: escapes what servers and names carry, self-contained", "[sidecar]") {
  CHECK(html_escaped("<script>alert('x')</script> & \"q\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  auto facts = synthetic::healthy_five();
  facts.probes[2].address.name = "<img src=x onerror=alert(1)>";
  facts.round_trip = synthetic::round_trip(facts.probes, "pzoo-1", 1);
  auto status = status_after_one_cycle(facts);
  auto page = render_status_page(status, status.last->checked_at + std::chrono::seconds(3));
  CHECK_THAT(page, StartsWith("<!DOCTYPE html>"));
  CHECK_THAT(page, Contains("&lt;img src=x onerror=alert(1)&gt;"));
  CHECK_THAT(page, !Contains("<img"));
  CHECK_THAT(page, !Contains("http://") && !Contains("https://") && !Contains("<script") && !Contains("<link"));
  CHECK_THAT(page, Contains("pzoo-0: ready"));
  CHECK_THAT(page, Contains("2026-09-21T14:13:20Z (3.0s ago)"));
  CHECK_THAT(page, Contains("healthy: leader pzoo-1"));
}

TEST_CASE("the listen address (--listen): HOST:PORT, IPv6 in brackets, clear errors", "[sidecar]") {
  auto v4 = parse_listen("0.0.0.0:9181");
  CHECK(v4.host == "0.0.0.0");
  CHECK(v4.port == 9181);
  auto v6 = parse_listen("[::]:9181");
  CHECK(v6.host == "::");
  CHECK(v6.port == 9181);
  CHECK(parse_listen("127.0.0.1:0").port == 0);
  CHECK_THROWS_WITH(parse_listen("9181"), Contains("--listen '9181'"));
  CHECK_THROWS_WITH(parse_listen(":::9181"), Contains("IPv6 host goes in brackets"));
  CHECK_THROWS_WITH(parse_listen("0.0.0.0:99999"), Contains("port must be a number"));
  CHECK_THROWS_WITH(parse_listen("0.0.0.0:"), Contains("port must be a number"));
  CHECK_THROWS_WITH(parse_listen("[::1:9181"), Contains("closing bracket"));
}

TEST_CASE("the Kubernetes manifests are yamllint-clean", "[sidecar]") {
  auto command = std::string("timeout 60 yamllint -s -c " ZKVERIFY_SOURCE_DIR "/deploy/.yamllint " ZKVERIFY_SOURCE_DIR
                             "/deploy/kubernetes > /dev/null 2>&1");
  CHECK(WEXITSTATUS(std::system(command.c_str())) == 0);
}
