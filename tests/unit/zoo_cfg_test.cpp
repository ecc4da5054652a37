// --zoo-cfg: the servers from ZooKeeper's own configuration, read from the lab's zoo.cfg files (plain,
// observers, IPv6), kubernetes-kafka's (no client addresses; and as its init.sh rewrites a pod's
// copy) and a 3.5+ dynamic file; what cannot be read is a usage error naming the file and line.

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "model/facts/errors.hpp"
#include "model/judge/checks.hpp"
#include "model/parse/parsers.hpp"
#include "model/parse/zoo_cfg.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/store/zoo_cfg_file.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::string data(const std::string& name) { return std::string(ZKVERIFY_TEST_DATA) + "/zoo_cfg/" + name; }

std::vector<std::string> endpoints(const std::vector<ServerAddress>& servers) {
  std::vector<std::string> out;
  for (const auto& server : servers)
    out.push_back(server.name + "=" + server.endpoint() + (*server.observer ? " observer" : ""));
  return out;
}

// The BadInput message parse_zoo_cfg throws for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    auto config = parse_zoo_cfg(text, "zoo.cfg");
    zoo_cfg_servers(config, nullptr, "zoo.cfg");
  } catch (const BadInput& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("zoo.cfg: the lab's, with client addresses: named server.N (IP hosts name nobody)") {
  auto servers = verifier::read_zoo_cfg_servers(data("lab_plain.cfg"));
  REQUIRE(servers.size() == 5);
  CHECK(servers[0].name == "server.1");
  CHECK(servers[0].host == "127.0.0.1");
  CHECK(servers[0].port == 37337);  // server.1's ";127.0.0.1:PORT", which is also its clientPort=
  CHECK(servers[1].port == 32771);  // server.2's own, not the clientPort= of the file's server
  CHECK(servers[4].name == "server.5");
  CHECK_FALSE(*servers[4].observer);
}

TEST_CASE("zoo.cfg: observers are marked, and the judge counts the configuration's participants") {
  auto servers = verifier::read_zoo_cfg_servers(data("lab_observers.cfg"));
  REQUIRE(servers.size() == 5);
  CHECK_FALSE(*servers[2].observer);
  CHECK(*servers[3].observer);
  CHECK(*servers[4].observer);
  // Two of three voters serving and both observers down: no srvr tells their roles, the configuration does.
  EnsembleFacts facts;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    ServerProbe probe;
    probe.address = servers[i];
    if (i < 2) {
      probe.srvr_exchange.error = ProbeError::ok;
      probe.srvr = Reply<SrvrFacts>{ProbeError::ok, SrvrFacts{}, {}};
      probe.srvr->facts.mode = i == 0 ? Mode::leader : Mode::follower;
    } else {
      probe.srvr_exchange.error = ProbeError::connect_refused;
    }
    facts.probes.push_back(probe);
  }
  auto report = judge(facts);
  CHECK(report.expected_voters == 3);
  CHECK(report.serving_voters == 2);
  CHECK(std::ranges::none_of(report.findings, [](const Finding& f) { return f.code == FindingCode::no_quorum; }));
  auto counted = std::ranges::find(report.findings, FindingCode::voters_counted, &Finding::code);
  REQUIRE(counted != report.findings.end());
  CHECK_THAT(counted->message, Contains("3 voters: the participants of the configuration --zoo-cfg read"));
}

TEST_CASE("zoo.cfg: IPv6 hosts in brackets") {
  auto servers = verifier::read_zoo_cfg_servers(data("lab_ipv6.cfg"));
  REQUIRE(servers.size() == 5);
  CHECK(servers[0].name == "server.1");
  CHECK(servers[0].host == "::1");
  CHECK(servers[0].endpoint() == "[::1]:40157");
}

TEST_CASE("zoo.cfg: kubernetes-kafka's, without client addresses: pod names, clientPort for all") {
  CHECK(endpoints(verifier::read_zoo_cfg_servers(data("kubernetes_kafka.cfg"))) ==
        std::vector<std::string>{"pzoo-0=pzoo-0.pzoo:2181", "pzoo-1=pzoo-1.pzoo:2181", "pzoo-2=pzoo-2.pzoo:2181",
                                 "zoo-0=zoo-0.zoo:2181", "zoo-1=zoo-1.zoo:2181"});
  // init.sh's copy in pzoo-1 names its own server 0.0.0.0: from anywhere but pzoo-1 that is nobody.
  CHECK_THROWS_WITH(verifier::read_zoo_cfg_servers(data("kubernetes_kafka_pzoo-1_conf.cfg")),
                    Contains("kubernetes_kafka_pzoo-1_conf.cfg:14: server.2's host is 0.0.0.0: a pod's own copy") &&
                        Contains("give the ConfigMap's"));
}

TEST_CASE("zoo.cfg: its membership as a server's conf reports it, to stand in for a 3.4 server's list") {
  using Lines = std::vector<std::string>;
  auto lines = [](const std::vector<Member>& members) {
    Lines out;
    for (const auto& m : members)
      out.push_back(
          fmt::format("{} {} {} {} '{}'", m.id, m.quorum_address, m.election_address, m.role, m.client_address));
    return out;
  };
  CHECK(lines(verifier::read_zoo_cfg_members(data("kubernetes_kafka.cfg")))[0] ==
        "1 pzoo-0.pzoo:2888 pzoo-0.pzoo:3888 participant ''");
  CHECK(lines(verifier::read_zoo_cfg_members(data("lab_ipv6.cfg")))[0] ==
        "1 [::1]:36403 [::1]:44145 participant '[::1]:40157'");
  auto observers = lines(verifier::read_zoo_cfg_members(data("lab_observers.cfg")));
  CHECK(observers[3] == "4 127.0.0.1:36005 127.0.0.1:36569 observer '127.0.0.1:36657'");
  // The same line read from a server's conf is the same member: a given list and a reported one agree.
  Member reported;
  REQUIRE(parse_member_line("server.1=[::1]:36403:44145:participant;[::1]:40157", reported));
  CHECK(identity_of(reported) == identity_of(verifier::read_zoo_cfg_members(data("lab_ipv6.cfg"))[0]));
  // 3.5+: the dynamic file's list, sorted by id; one without the role is a participant.
  auto dynamic = verifier::read_zoo_cfg_members(data("dynamic/zoo.cfg"));
  CHECK(dynamic[0].quorum_address == "zk-0.zk-hs.default.svc.cluster.local:2888");
  CHECK(std::ranges::is_sorted(dynamic, {}, &Member::id));
  CHECK(parse_zoo_cfg("server.2=b:1:2\nserver.1=a:1:2\n", "zoo.cfg").servers.size() == 2);
  CHECK(zoo_cfg_members(parse_zoo_cfg("server.2=b:1:2\nserver.1=a:1:2\n", "zoo.cfg"), nullptr)[0].id == 1);
}

TEST_CASE("zoo.cfg: as Java reads properties, 3.6+ multiple addresses, roles in any case, CRLF lines") {
  auto servers = [](const std::string& text) {
    return endpoints(zoo_cfg_servers(parse_zoo_cfg(text, "zoo.cfg"), nullptr, "zoo.cfg"));
  };
  CHECK(servers("clientPort: 2181\r\n! a comment\r\nserver.1 = a.x:1:2\r\nserver.2 b.x:1:2\r\n") ==
        std::vector<std::string>{"a=a.x:2181", "b=b.x:2181"});
  // ZooKeeper writes the role after the last address; the first address is the one reached.
  CHECK(servers("server.1=a.x:1:2|a2.x:3:4:Observer;2181\nserver.2=b.x:1:2:PARTICIPANT;2181\n") ==
        std::vector<std::string>{"a=a.x:2181 observer", "b=b.x:2181"});
  // Two hosts with one first label: neither names a server.
  CHECK(servers("server.1=zk.a:1:2;2181\nserver.2=zk.b:1:2;2181\nserver.3=other.a:1:2;2181\n") ==
        std::vector<std::string>{"server.1=zk.a:2181", "server.2=zk.b:2181", "other=other.a:2181"});
}

TEST_CASE("zoo.cfg: a 3.5+ dynamic file, relative to zoo.cfg, holds the membership") {
  CHECK(endpoints(verifier::read_zoo_cfg_servers(data("dynamic/zoo.cfg"))) ==
        std::vector<std::string>{"zk-0=zk-0.zk-hs.default.svc.cluster.local:2181",
                                 "zk-1=zk-1.zk-hs.default.svc.cluster.local:2181",
                                 "zk-2=zk-2.zk-hs.default.svc.cluster.local:2181",
                                 "zk-3=zk-3.zk-hs.default.svc.cluster.local:2181 observer"});
}

TEST_CASE("zoo.cfg: what cannot be read is named with its file and line") {
  CHECK(error_of("clientPort=2181\nserver.1=a:2888\n") ==
        "zoo.cfg:2: server.1: 'a:2888' is not host:quorumPort:electionPort[:role]");
  CHECK(error_of("server.1=a:1:2:observer|b:3:4:participant;3\n") ==
        "zoo.cfg:1: server.1: its addresses give it two roles");
  CHECK(error_of("clientPort=2181\nserver.1=127.0.0.1:1:2\nserver.2=127.0.0.1:3:4\n") ==
        "zoo.cfg:3: server.2 is reached at the same host and port as server.1 (clientPort= for all): give each line "
        "its ';port', or use --servers");
  CHECK(error_of("server.x=a:1:2;3\n") == "zoo.cfg:1: 'server.x' is not server.N with N a positive number");
  CHECK(error_of("server.1=a:1:2;3\nserver.1=b:1:2;3\n") == "zoo.cfg:2: server.1 is listed twice");
  CHECK(error_of("server.1=a:1:2:voter;3\n") ==
        "zoo.cfg:1: server.1: role 'voter' is neither participant nor observer");
  CHECK_THAT(error_of("server.1=a:1:2;70000\n"), StartsWith("zoo.cfg:1: ") && Contains("70000"));
  CHECK(error_of("server.1=[::1:1:2;3\n") == "zoo.cfg:1: '[::1:1:2' has no ']'");
  CHECK(error_of("server.1=a/b:1:2;3\n") == "zoo.cfg:1: server.1: 'a/b' is not a host name or address");
  CHECK(error_of("tickTime=2000\n") == "zoo.cfg: no server.N lines: not an ensemble's configuration");
  CHECK(error_of("server.1=a:1:2\n") == "zoo.cfg:1: server.1 has no client port (no ';PORT' and no clientPort=)");
  CHECK(error_of("secureClientPort=2281\nserver.1=a:1:2\n") ==
        "zoo.cfg:2: server.1 accepts clients over TLS only (secureClientPort): zkverify does not speak TLS");
  CHECK(error_of("# a comment\n\nclientPort=2181\nserver.1=a.b:1:2\n").empty());
}

TEST_CASE("zoo.cfg: a missing file or dynamic file is named") {
  CHECK_THROWS_WITH(verifier::read_zoo_cfg_servers("/nonexistent/zoo.cfg"),
                    "--zoo-cfg: cannot read '/nonexistent/zoo.cfg': No such file or directory");
  auto dir = std::filesystem::temp_directory_path() / ("zoo-cfg-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "zoo.cfg") << "dynamicConfigFile=zoo.cfg.dynamic.1\n";
  CHECK_THROWS_WITH(verifier::read_zoo_cfg_servers((dir / "zoo.cfg").string()),
                    Contains("cannot read '" + (dir / "zoo.cfg.dynamic.1").string() + "'"));
  std::filesystem::remove_all(dir);
}
