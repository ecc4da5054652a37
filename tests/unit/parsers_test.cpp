#include <catch2/catch.hpp>

#include "model/facts/text.hpp"
#include "model/parse/parsers.hpp"
#include "test_data.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;

TEST_CASE("srvr from a leader and a follower of a real 3.8.0 ensemble") {
  auto leader = parse_srvr(capture("srvr_leader.txt"));
  REQUIRE(leader.error == ProbeError::ok);
  CHECK(leader.facts.mode == Mode::leader);
  CHECK(leader.facts.zxid.value == 0x100000000);
  CHECK(leader.facts.zxid.epoch() == 1);
  CHECK(leader.facts.zxid.counter() == 0);
  CHECK(leader.facts.node_count == 5);
  CHECK_THAT(leader.facts.version, Contains("3.8.0"));

  auto follower = parse_srvr(capture("srvr_follower.txt"));
  REQUIRE(follower.error == ProbeError::ok);
  CHECK(follower.facts.mode == Mode::follower);
  CHECK(follower.facts.received == 4);  // "Received: 4": tells a restart (restart_plan)
}

TEST_CASE("stat parses like srvr, client list skipped") {
  auto stat = parse_srvr(capture("stat_follower.txt"));
  REQUIRE(stat.error == ProbeError::ok);
  CHECK(stat.facts.mode == Mode::follower);
  CHECK(stat.facts.zxid.value == 0);
  CHECK(stat.facts.node_count == 5);
}

TEST_CASE("refusals: not serving and not whitelisted, for every word") {
  CHECK(parse_srvr(capture("srvr_no_quorum.txt")).error == ProbeError::not_serving);
  CHECK(parse_mntr(capture("mntr_no_quorum.txt")).error == ProbeError::not_serving);
  CHECK(parse_conf(capture("conf_no_quorum.txt")).error == ProbeError::not_serving);
  CHECK(parse_isro(capture("isro_no_quorum.txt")).error == ProbeError::not_serving);  // "null"
  CHECK(parse_mntr(capture("mntr_whitelist_ruok_only.txt")).error == ProbeError::not_whitelisted);
  CHECK(parse_conf(capture("conf_whitelist_ruok_only.txt")).error == ProbeError::not_whitelisted);
  CHECK(parse_isro(capture("isro_whitelist_ruok_only.txt")).error == ProbeError::not_whitelisted);
  CHECK(parse_srvr(capture("stat_whitelist_ruok_only.txt")).error == ProbeError::not_whitelisted);
  // srvr is always enabled in 3.8, whatever the whitelist says:
  CHECK(parse_srvr(capture("srvr_whitelist_ruok_only.txt")).error == ProbeError::ok);
}

TEST_CASE("an empty reply, for every word: the server closed the connection without one") {
  for (auto error : {parse_srvr("").error, parse_mntr("").error, parse_conf("").error, parse_isro("").error})
    CHECK(error == ProbeError::malformed);
  CHECK(parse_srvr("").detail == kClosedWithoutReply);
  CHECK(parse_mntr("").detail == kClosedWithoutReply);
  CHECK(parse_srvr("x").detail == "not srvr output (reply: \"x\")");
}

TEST_CASE("cons from a real 3.8.0 follower: each session with its timeout, cons's own connection left out") {
  auto cons = parse_cons(capture("cons_follower.txt"));
  REQUIRE(cons.ok());
  REQUIRE(cons.facts.connections.size() == 1);
  CHECK(cons.facts.connections[0].client == "127.0.0.1:53918");
  CHECK(cons.facts.connections[0].session == 0x100024613950001);
  CHECK(cons.facts.connections[0].timeout == std::chrono::milliseconds(4000));
  CHECK(parse_cons("cons is not executed because it is not in the whitelist.").error == ProbeError::not_whitelisted);
  CHECK(parse_cons("Zookeeper version: 3.8.0\n").error == ProbeError::malformed);
  CHECK(parse_cons(" /10.0.0.1:1[1](sid=0xzz,to=4000)\n").error == ProbeError::malformed);
}

TEST_CASE("ruok says imok without a quorum: the reason zkverify exists") {
  auto ruok = parse_ruok(capture("ruok_no_quorum.txt"));
  REQUIRE(ruok.error == ProbeError::ok);
  CHECK(ruok.facts.imok);
  CHECK(parse_srvr(capture("srvr_no_quorum.txt")).error == ProbeError::not_serving);
}

TEST_CASE("mntr: leader-only keys") {
  auto leader = parse_mntr(capture("mntr_leader.txt"));
  REQUIRE(leader.error == ProbeError::ok);
  CHECK(leader.facts.server_state == "leader");
  CHECK(leader.facts.synced_followers == 4);
  CHECK(leader.facts.learners == 4);
  CHECK(leader.facts.znode_count == 5);
  auto follower = parse_mntr(capture("mntr_follower.txt"));
  REQUIRE(follower.error == ProbeError::ok);
  CHECK(follower.facts.server_state == "follower");
  CHECK_FALSE(follower.facts.synced_followers.has_value());
}

TEST_CASE("mntr and the AdminServer's monitor: the ephemerals and the client connections") {
  auto mntr = parse_mntr(capture("mntr_follower_clients.txt"));
  REQUIRE(mntr.error == ProbeError::ok);
  CHECK(mntr.facts.ephemerals == 3);
  CHECK(mntr.facts.alive_connections == 2);
  auto monitor = parse_admin_monitor(capture("admin_monitor_follower_clients.json"));
  REQUIRE(monitor.error == ProbeError::ok);
  CHECK(monitor.facts.ephemerals == 3);
  CHECK(monitor.facts.alive_connections == 1);
  CHECK_FALSE(parse_mntr("zk_server_state\tleader\n").facts.ephemerals.has_value());
}

TEST_CASE("AdminServer connections: each session and its timeout, as cons gives them", "[clients]") {
  auto listed = parse_admin_connections(capture("admin_connections_follower.json"));
  REQUIRE(listed.error == ProbeError::ok);
  REQUIRE(listed.facts.connections.size() == 1);
  CHECK(listed.facts.connections[0].session == 0x10000ebd35a0001);  // kazoo's, holding /brokers/ids/9
  CHECK(listed.facts.connections[0].timeout == std::chrono::milliseconds(6000));
  CHECK(listed.facts.connections[0].client == "127.0.0.1:58290");
  CHECK(parse_admin_connections(R"({"connections":[{"session_id":0}],"secure_connections":[{"session_id":5,)"
                                R"("session_timeout":4000}],"error":null})")
            .facts.connections.size() == 1);  // the handshaking one left out, the secure one kept
  CHECK(parse_admin_connections(R"({"error":"This ZooKeeper instance is not currently serving requests"})").error ==
        ProbeError::not_serving);
  CHECK(parse_admin_connections(R"({"secure_connections":[]})").error == ProbeError::malformed);
}

TEST_CASE("conf: server id and membership") {
  auto conf = parse_conf(capture("conf_follower.txt"));
  REQUIRE(conf.error == ProbeError::ok);
  CHECK(conf.facts.server_id == 1);
  REQUIRE(conf.facts.members.size() == 5);
  CHECK(conf.facts.members[0].id == 1);
  CHECK(conf.facts.members[0].role == "participant");
  CHECK(conf.facts.members[0].quorum_address == "127.0.0.1:43343");
  CHECK(conf.facts.members[0].election_address == "127.0.0.1:34483");
  CHECK(conf.facts.members[0].client_address == "127.0.0.1:43863");
  CHECK(conf.facts.config_version == 0);
}

TEST_CASE("member lines: older forms, observers, IPv6") {
  Member m;
  REQUIRE(parse_member_line("server.7=zk-7.example:2888:3888", m));
  CHECK(m.id == 7);
  CHECK(m.role == "participant");
  CHECK(m.client_address.empty());
  REQUIRE(parse_member_line("server.2=[::1]:2888:3888:observer;[::1]:2181", m));
  CHECK(m.quorum_address == "[::1]:2888");
  CHECK(m.election_address == "[::1]:3888");
  CHECK(m.role == "observer");
  CHECK(m.client_address == "[::1]:2181");
  CHECK_FALSE(parse_member_line("server.x=h:1:2", m));
  CHECK_FALSE(parse_member_line("server.3=h:1", m));
}

TEST_CASE("isro and ruok") {
  CHECK(parse_isro(capture("isro_leader.txt")).error == ProbeError::ok);
  CHECK_FALSE(parse_isro("rw").facts.read_only);
  CHECK(parse_isro("ro").facts.read_only);
  CHECK(parse_ruok(capture("ruok_leader.txt")).facts.imok);
}

TEST_CASE("garbage is malformed, with an excerpt that is safe to print") {
  auto srvr = parse_srvr(std::string("\x01\x02HTTP/1.1 400\r\n", 17));
  CHECK(srvr.error == ProbeError::malformed);
  CHECK_THAT(srvr.detail, Contains("\\x01\\x02HTTP/1.1 400"));
  CHECK(parse_srvr("Zookeeper version: 3.8.0\nMode: leader\n").error == ProbeError::malformed);  // no Zxid
  CHECK_THAT(parse_srvr("Zookeeper version: x\nZxid: 0xZZ\nMode: leader\n").detail, Contains("bad Zxid"));
  CHECK_THAT(parse_srvr("Zookeeper version: x\nZxid: 0x1\nMode: boss\n").detail, Contains("unknown Mode 'boss'"));
  CHECK(parse_mntr("hello").error == ProbeError::malformed);
  CHECK(parse_conf("").error == ProbeError::malformed);
  CHECK(parse_isro("maybe").error == ProbeError::malformed);
  CHECK(parse_ruok("").error == ProbeError::malformed);
  CHECK_THAT(excerpt(std::string(200, 'a'), 10), Contains("(200 bytes)"));
}

TEST_CASE("AdminServer JSON") {
  auto monitor = parse_admin_monitor(capture("admin_monitor_leader.json"));
  REQUIRE(monitor.error == ProbeError::ok);
  CHECK(monitor.facts.server_state == "leader");
  CHECK(monitor.facts.synced_followers == 4);

  auto conf = parse_admin_conf(capture("admin_conf_leader.json"));
  REQUIRE(conf.error == ProbeError::ok);
  CHECK(conf.facts.server_id == 5);

  auto view = parse_admin_voting_view(capture("admin_voting_view_leader.json"));
  REQUIRE(view.error == ProbeError::ok);
  REQUIRE(view.facts.members.size() == 5);
  // The same membership as conf's, whichever way it was fetched.
  auto conf_members = parse_conf(capture("conf_follower.txt")).facts.members;
  CHECK(view.facts.members == conf_members);

  CHECK(parse_admin_voting_view(capture("admin_voting_view_no_quorum.json")).error == ProbeError::not_serving);
  auto html = parse_admin_monitor(capture("admin_monitor_no_quorum.json"));  // Jetty's HTTP 500 page
  CHECK(html.error == ProbeError::malformed);
  CHECK_THAT(html.detail, Contains("not a JSON object"));
  CHECK(parse_admin_monitor(R"({"command":"monitor","error":"boom"})").error == ProbeError::malformed);
}
