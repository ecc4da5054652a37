#include <catch2/catch.hpp>

#include "model/facts/addresses.hpp"
#include "model/facts/time_text.hpp"
#include "verifier/commands/options.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;

TEST_CASE("server list: named and unnamed entries") {
  auto servers = parse_server_list("pzoo-0=127.0.0.1:2181, 127.0.0.2:2182,[::1]:2183,zoo-1=localhost:2184");
  REQUIRE(servers.size() == 4);
  CHECK(servers[0].name == "pzoo-0");
  CHECK(servers[0].host == "127.0.0.1");
  CHECK(servers[0].port == 2181);
  CHECK(servers[1].name == "127.0.0.2:2182");
  CHECK(servers[2].host == "::1");
  CHECK(servers[2].endpoint() == "[::1]:2183");
  CHECK(servers[2].name == "[::1]:2183");
  CHECK(servers[3].name == "zoo-1");
  CHECK(servers[3].port == 2184);
}

TEST_CASE("server list: bad input names what is wrong") {
  CHECK_THROWS_WITH(parse_server_list(""), Contains("empty"));
  CHECK_THROWS_WITH(parse_server_list("a:1,,b:2"), Contains("empty entry"));
  CHECK_THROWS_WITH(parse_server_list("localhost"), Contains("'localhost' has no port"));
  CHECK_THROWS_WITH(parse_server_list("h:0"), Contains("'0' is not a port"));
  CHECK_THROWS_WITH(parse_server_list("h:65536"), Contains("not a port"));
  CHECK_THROWS_WITH(parse_server_list("h:21x"), Contains("not a port"));
  CHECK_THROWS_WITH(parse_server_list("=h:1"), Contains("empty name"));
  CHECK_THROWS_WITH(parse_server_list("a=h:1,a=h:2"), Contains("name 'a' appears twice"));
  CHECK_THROWS_WITH(parse_server_list("a=h:1,b=h:1"), Contains("h:1 appears twice"));
  CHECK_THROWS_WITH(parse_server_list("pods/zoo-0=h:1"), Contains("server name 'pods/zoo-0' has a '/'"));
  CHECK_THROWS_WITH(parse_server_list("::1:2181"), Contains("[addr]:port"));
  CHECK_THROWS_WITH(parse_server_list(":2181"), Contains("empty host"));
}

TEST_CASE("admin ports: one for all, or one per server") {
  auto servers = parse_server_list("a:1,b:2,c:3");
  assign_admin_ports(servers, "8080");
  CHECK(servers[2].admin_port == 8080);
  assign_admin_ports(servers, "81,82,83");
  CHECK(servers[0].admin_port == 81);
  CHECK(servers[2].admin_port == 83);
  CHECK_THROWS_WITH(assign_admin_ports(servers, "81,82"), Contains("3 servers, 2 ports"));
  CHECK_THROWS_WITH(assign_admin_ports(servers, "http"), Contains("'http' is not a port"));
}

TEST_CASE("durations") {
  CHECK(parse_duration("500ms") == std::chrono::milliseconds(500));
  CHECK(parse_duration("2s") == std::chrono::seconds(2));
  CHECK(parse_duration("5m") == std::chrono::minutes(5));
  CHECK(parse_duration("1h") == std::chrono::hours(1));
  CHECK(parse_duration("14d") == std::chrono::hours(24 * 14));  // certificates are counted in days
  // Go's and Kubernetes' forms: fractions, several units in a row.
  CHECK(parse_duration("1m30s") == std::chrono::seconds(90));
  CHECK(parse_duration("1h2m3s") == std::chrono::seconds(3723));
  CHECK(parse_duration("1.5s") == std::chrono::milliseconds(1500));
  CHECK(parse_duration(".5s") == std::chrono::milliseconds(500));
  CHECK(parse_duration("2500us") == std::chrono::milliseconds(3));  // rounded to the nearest millisecond
  CHECK(parse_duration("1500000ns") == std::chrono::milliseconds(2));
  for (const char* bad : {"", "5", "s", ".", "1..5s", "2 s", "3w", "1s2", "5ms ", "99999999999999h"})
    CHECK_THROWS_WITH(parse_duration(bad), Contains("is not a duration"));
  CHECK_THROWS_WITH(parse_duration("5"), Contains("give a unit"));
  for (const char* zero : {"0s", "0", "-1s", "0m0s", "0.0h"})
    CHECK_THROWS_WITH(parse_duration(zero), Contains("must be greater than 0"));
  CHECK_THROWS_WITH(parse_duration("10us"), Contains("is shorter than 1ms"));
  CHECK(format_duration(std::chrono::milliseconds(250)) == "250ms");
  CHECK(format_duration(std::chrono::milliseconds(1500)) == "1.5s");
  CHECK(format_duration(std::chrono::milliseconds(123000)) == "2m03s");
}

TEST_CASE("namespace validation keeps writes inside a proper namespace") {
  using verifier::parse_namespace;
  CHECK(parse_namespace("/zkverify") == "/zkverify");
  CHECK(parse_namespace("/apps/zkverify") == "/apps/zkverify");
  CHECK_THROWS_WITH(parse_namespace("zkverify"), Contains("absolute"));
  CHECK_THROWS_WITH(parse_namespace("/"), Contains("root"));
  CHECK_THROWS_WITH(parse_namespace("/a/"), Contains("end with"));
  CHECK_THROWS_WITH(parse_namespace("/a//b"), Contains("empty path component"));
  CHECK_THROWS_WITH(parse_namespace("/zookeeper/x"), Contains("reserved"));
  CHECK_THROWS_WITH(parse_namespace("/a/./b"), Contains("'.' or '..' component"));
  CHECK_THROWS_WITH(parse_namespace("/a/.."), Contains("'.' or '..' component"));
  CHECK(parse_namespace("/a/.b/..c") == "/a/.b/..c");  // only whole components are refused
}

TEST_CASE("the --clients option takes absolute paths and the kafka preset, and names what it refuses") {
  using verifier::parse_client_paths;
  CHECK(parse_client_paths("/solr/live_nodes") == std::vector<std::string>{"/solr/live_nodes"});
  CHECK(parse_client_paths("kafka") == std::vector<std::string>{"/brokers/ids", "/controller", "/controller_epoch"});
  CHECK_THROWS_WITH(parse_client_paths("brokers/ids"), Contains("--clients 'brokers/ids'") && Contains("absolute"));
  CHECK_THROWS_WITH(parse_client_paths("/"), Contains("root"));
  CHECK_THROWS_WITH(parse_client_paths("/brokers/ids/"), Contains("end with"));
  CHECK_THROWS_WITH(parse_client_paths("/a//b"), Contains("empty path component"));
}
