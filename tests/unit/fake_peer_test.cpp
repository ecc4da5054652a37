#include <catch2/catch.hpp>

#include "fake_peer.hpp"
#include "loopback_port.hpp"
#include "model/parse/parsers.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "probes/round_trip.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using Catch::Matchers::Contains;
using ::fake::Behaviour;

namespace {

ServerAddress at(const ::fake::Peer& peer, std::string name = "peer") {
  return {std::move(name), "127.0.0.1", peer.port(), {}};
}

ProbeLimits limits_for(std::chrono::milliseconds span) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + span;
  limits.connect_timeout = span;
  limits.exchange_timeout = span;
  return limits;
}

using namespace std::chrono_literals;

// The two limits far apart, so a probe that ends by the short one proves which one capped it:
// `overall` the whole deadline, `each` the connect and exchange timeouts.
ProbeLimits limits_apart(std::chrono::milliseconds overall, std::chrono::milliseconds each) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + overall;
  limits.connect_timeout = each;
  limits.exchange_timeout = each;
  return limits;
}

// The longer of the two limits above: a probe capped by the shorter one (300ms) ends long before it.
// Not a timing assertion: it tells which limit ended the wait, with 29 s to spare.
constexpr auto kLongLimit = 30s;

// Runs `body`, returning how long it took.
template <class Body>
std::chrono::milliseconds timed(Body body) {
  auto start = Clock::now();
  body();
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

using loopback::closed_port;

}  // namespace

TEST_CASE("a well-behaved peer: the reply, read until the server closes") {
  ::fake::Peer peer({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}}});
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits_for(std::chrono::seconds(5)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(exchange.reply == capture("srvr_leader.txt"));
}

TEST_CASE("a peer that accepts and never answers: read_timeout, named as such") {
  ::fake::Peer peer({{"srvr", {Behaviour::stall, ""}}});
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits_for(std::chrono::milliseconds(300)));
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK(describe(exchange) == "connected, but no reply within the deadline");
}

TEST_CASE("a peer that stalls: the overall deadline caps a longer exchange timeout, and the other way round") {
  ::fake::Peer peer({{"srvr", {Behaviour::stall, ""}}});
  Exchange exchange;
  SECTION("the deadline is the shorter") {
    auto took = timed([&] { exchange = ask_word(test_executor(), at(peer), "srvr", limits_apart(300ms, kLongLimit)); });
    CHECK(took < kLongLimit / 3);
  }
  SECTION("the exchange timeout is the shorter") {
    auto took = timed([&] { exchange = ask_word(test_executor(), at(peer), "srvr", limits_apart(kLongLimit, 300ms)); });
    CHECK(took < kLongLimit / 3);
  }
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK(describe(exchange) == "connected, but no reply within the deadline");
}

TEST_CASE("a peer that drips: the overall deadline caps a longer exchange timeout") {
  ::fake::Peer peer({{"srvr", {Behaviour::drip, ""}}});
  Exchange exchange;
  auto took = timed([&] { exchange = ask_word(test_executor(), at(peer), "srvr", limits_apart(300ms, kLongLimit)); });
  CHECK(took < kLongLimit / 3);
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK_THAT(describe(exchange), Contains("reply did not end within the deadline"));
}

TEST_CASE("no TCP connection within the deadline: connect_timeout, whichever limit is shorter") {
  ::fake::Unaccepting nobody_accepts;
  ServerAddress server{"unaccepting", "127.0.0.1", nobody_accepts.port(), {}};
  Exchange exchange;
  SECTION("the deadline is the shorter") {
    auto took = timed([&] { exchange = ask_word(test_executor(), server, "srvr", limits_apart(300ms, kLongLimit)); });
    CHECK(took < kLongLimit / 3);
  }
  SECTION("the connect timeout is the shorter") {
    auto took = timed([&] { exchange = ask_word(test_executor(), server, "srvr", limits_apart(kLongLimit, 300ms)); });
    CHECK(took < kLongLimit / 3);
  }
  CHECK(exchange.error == ProbeError::connect_timeout);
  CHECK(describe(exchange) == "no TCP connection within the deadline");
}

TEST_CASE("a peer that resets the connection in the middle of its reply: reset, with what came before") {
  auto half = capture("srvr_leader.txt").substr(0, 40);
  ::fake::Peer peer({{"srvr", {Behaviour::reset, half}}});
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits_apart(kLongLimit, kLongLimit));
  CHECK(exchange.error == ProbeError::reset);
  CHECK_THAT(describe(exchange), Contains("connection failed: ") && Contains("reset"));
  CHECK(exchange.reply == half);
}

TEST_CASE("a good srvr, then a stall on mntr: srvr's facts kept, no further word asked, by the exchange timeout") {
  ::fake::Peer peer({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}}, {"mntr", {Behaviour::stall, ""}}},
                    {Behaviour::answer, "unexpected\n"});
  std::vector<ServerProbe> probes;
  SECTION("the exchange timeout is the shorter") {
    auto took = timed([&] { probes = probe_servers(test_executor(), {at(peer)}, limits_apart(kLongLimit, 300ms)); });
    CHECK(took < kLongLimit / 3);
  }
  SECTION("the deadline is the shorter") {
    auto took = timed([&] { probes = probe_servers(test_executor(), {at(peer)}, limits_apart(500ms, kLongLimit)); });
    CHECK(took < kLongLimit / 3);
  }
  REQUIRE(probes.size() == 1);
  REQUIRE(probes[0].srvr);
  CHECK(probes[0].srvr->error == ProbeError::ok);
  CHECK(probes[0].srvr->facts.mode == Mode::leader);
  CHECK_FALSE(probes[0].mntr);
  CHECK_FALSE(probes[0].conf);
  CHECK_FALSE(probes[0].ruok);
  CHECK(peer.connections() == 2);  // srvr and mntr: a stalling server is asked nothing more
}

TEST_CASE("a peer that drips bytes forever: cut off at the deadline") {
  ::fake::Peer peer({{"srvr", {Behaviour::drip, ""}}});
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits_for(std::chrono::milliseconds(300)));
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK_FALSE(exchange.reply.empty());
  CHECK_THAT(describe(exchange), Contains("reply did not end within the deadline"));
}

TEST_CASE("a peer that floods: cut off at the size cap") {
  ::fake::Peer peer({{"srvr", {Behaviour::flood, ""}}});
  auto limits = limits_for(std::chrono::seconds(10));
  limits.max_reply_bytes = 256 * 1024;
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits);
  CHECK(exchange.error == ProbeError::reply_too_large);
  CHECK(exchange.reply.size() <= limits.max_reply_bytes + 4096);
  CHECK_THAT(describe(exchange), Contains("262144 bytes"));
}

TEST_CASE("nobody listening: connection refused") {
  ServerAddress nobody{"nobody", "127.0.0.1", closed_port(), {}};
  auto exchange = ask_word(test_executor(), nobody, "srvr", limits_for(std::chrono::seconds(2)));
  CHECK(exchange.error == ProbeError::connect_refused);
  CHECK(describe(exchange) == "connection refused");
}

TEST_CASE("a peer that closes at once: an empty reply, which srvr's parser calls malformed") {
  ::fake::Peer peer({{"srvr", {Behaviour::close_at_once, ""}}});
  auto exchange = ask_word(test_executor(), at(peer), "srvr", limits_for(std::chrono::seconds(2)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(parse_srvr(exchange.reply).error == ProbeError::malformed);
}

TEST_CASE("probe_servers with every misbehaviour at once: the good servers are still fully probed") {
  ::fake::Peer good({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}},
                     {"mntr", {Behaviour::answer, capture("mntr_leader.txt")}},
                     {"conf", {Behaviour::answer, capture("conf_follower.txt")}},
                     {"isro", {Behaviour::answer, "rw"}},
                     {"ruok", {Behaviour::answer, "imok"}}});
  ::fake::Peer refusing({{"srvr", {Behaviour::answer, capture("srvr_whitelist_ruok_only.txt")}},
                         {"mntr", {Behaviour::answer, capture("mntr_whitelist_ruok_only.txt")}},
                         {"conf", {Behaviour::answer, capture("conf_whitelist_ruok_only.txt")}},
                         {"isro", {Behaviour::answer, capture("isro_whitelist_ruok_only.txt")}},
                         {"ruok", {Behaviour::answer, "imok"}}});
  ::fake::Peer garbage({{"srvr", {Behaviour::answer, "\x16\x03\x01 TLS?"}}});
  ::fake::Peer silent({{"srvr", {Behaviour::stall, ""}}});
  ::fake::Peer flood({{"srvr", {Behaviour::flood, ""}}});
  ::fake::Peer drip({{"srvr", {Behaviour::drip, ""}}});

  std::vector<ServerAddress> servers{at(good, "good"),     at(refusing, "refusing"), at(garbage, "garbage"),
                                     at(silent, "silent"), at(flood, "flood"),       at(drip, "drip")};
  auto probes = probe_servers(test_executor(), servers, limits_for(std::chrono::milliseconds(800)));
  REQUIRE(probes.size() == 6);

  CHECK(probes[0].srvr->error == ProbeError::ok);
  CHECK(probes[0].mntr->facts.synced_followers == 4);
  CHECK(probes[0].conf->facts.server_id == 1);
  CHECK(probes[0].ruok->facts.imok);
  CHECK(probes[0].refused_words.empty());

  CHECK(probes[1].srvr->error == ProbeError::ok);
  CHECK(probes[1].refused_words == std::vector<std::string>{"mntr", "conf", "isro"});

  CHECK(probes[2].srvr->error == ProbeError::malformed);
  CHECK_THAT(probes[2].srvr->detail, Contains("\\x16\\x03\\x01 TLS?"));
  CHECK(probes[3].srvr_exchange.error == ProbeError::read_timeout);
  CHECK(probes[4].srvr_exchange.error == ProbeError::reply_too_large);
  CHECK(probes[5].srvr_exchange.error == ProbeError::read_timeout);

  // A stalled server gets no further words (its silent srvr only the question whether it speaks TLS,
  // which a peer that never reads may see beside the first), and no other server ever sees two
  // connections from one probe.
  CHECK(silent.connections() == 2);
  CHECK(good.connections() == 5);
  for (const auto* peer : {&good, &refusing, &garbage, &flood, &drip}) CHECK(peer->max_concurrent() <= 1);
  CHECK(silent.max_concurrent() <= 2);
}

TEST_CASE("a peer named by a host name is looked up, then asked") {
  ::fake::Peer peer({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}}});
  auto exchange =
      ask_word(test_executor(), {"peer", "localhost", peer.port(), {}}, "srvr", limits_for(std::chrono::seconds(5)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(exchange.reply == capture("srvr_leader.txt"));
}

TEST_CASE(
    "round trip through the C client: a server that accepts TCP and never answers the handshake costs the "
    "deadline, no more",
    "[round_trip][c_keeper]") {
  using namespace std::chrono_literals;
  // The handshake's first four bytes (its length) are no word the peer knows: it stalls. One peer
  // per server, so the writer's own session is seen reaching its peer however the two are scheduled.
  ::fake::Peer by_address({}, {Behaviour::stall, ""});
  ::fake::Peer by_name({}, {Behaviour::stall, ""});
  RoundTripPlan plan;
  plan.servers = {{"stalled", "127.0.0.1", by_address.port(), {}},
                  {"stalled-by-name", "localhost", by_name.port(), {}}};
  plan.namespace_path = "/zkverify";
  plan.payload = "round trip payload";
  // Far beyond the deadlines: a trip that waited for the session to time out would show.
  plan.session_timeout = 10000ms;
  const ::fake::Peer* writer = nullptr;
  SECTION("written through the numeric address") { plan.writer = 0, writer = &by_address; }
  SECTION("written through the host name") { plan.writer = 1, writer = &by_name; }
  auto start = Clock::now();
  plan.deadline = start + 1500ms;
  plan.close_deadline = start + 1700ms;

  auto trip = run_round_trip(plan, test_keepers());
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  INFO("returned after " << elapsed.count() << " ms");
  // The margin absorbs a starved machine's scheduling; a trip that waited out the session does not fit.
  CHECK(Clock::now() < plan.close_deadline + 1500ms);
  CHECK(writer->connections() >= 1);  // the writer reached its peer: the wait was the handshake's
  CHECK(trip.write_error == ZkError::deadline_exceeded);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
}

namespace {

// A server whose whitelist is kubernetes-kafka's (only srvr and ruok answer), with its AdminServer
// on the same port behaving as `admin` does for every /commands/ request.
::fake::Peer ruok_only_with_admin(::fake::Script admin) {
  return ::fake::Peer({{"srvr", {Behaviour::answer, capture("srvr_whitelist_ruok_only.txt")}},
                       {"mntr", {Behaviour::answer, capture("mntr_whitelist_ruok_only.txt")}},
                       {"conf", {Behaviour::answer, capture("conf_whitelist_ruok_only.txt")}},
                       {"isro", {Behaviour::answer, capture("isro_whitelist_ruok_only.txt")}},
                       {"ruok", {Behaviour::answer, "imok"}},
                       {"GET ", std::move(admin)}});
}

std::string http_ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

// Probes the peer as a server whose AdminServer is on its own port, the limits far apart.
ServerProbe probe_with_admin(const ::fake::Peer& peer, std::chrono::milliseconds overall,
                             std::chrono::milliseconds each, std::chrono::milliseconds& took) {
  ServerAddress server{"peer", "127.0.0.1", peer.port(), peer.port()};
  std::vector<ServerProbe> probes;
  took = timed([&] { probes = probe_servers(test_executor(), {server}, limits_apart(overall, each)); });
  REQUIRE(probes.size() == 1);
  return probes[0];
}

}  // namespace

TEST_CASE("a well-behaved AdminServer fills in what the whitelist hides", "[admin]") {
  auto peer = ruok_only_with_admin({Behaviour::answer, http_ok(capture("admin_monitor_leader.json"))});
  std::chrono::milliseconds took{};
  auto probe = probe_with_admin(peer, 5s, 5s, took);
  CHECK(probe.srvr->error == ProbeError::ok);
  REQUIRE(probe.mntr);
  CHECK(probe.mntr->error == ProbeError::ok);
  CHECK(probe.mntr->facts.synced_followers == 4);
}

// The misbehaving AdminServers (slow headers, an endless chunked body, a redirect loop, 10 MB) are
// rows of the hostile-peer matrix: tests/unit/hostile_peers_test.cpp.

TEST_CASE(
    "probe_servers, verdict words only: conf beside srvr, mntr where it counts, ruok only if not "
    "serving, and each server reported once srvr answered") {
  auto peer_answering = [](const std::string& srvr, const std::string& conf, const std::string& mntr) {
    return std::map<std::string, ::fake::Script>{{"srvr", {Behaviour::answer, capture(srvr)}},
                                                 {"conf", {Behaviour::answer, capture(conf)}},
                                                 {"mntr", {Behaviour::answer, capture(mntr)}},
                                                 {"isro", {Behaviour::answer, "rw"}},
                                                 {"ruok", {Behaviour::answer, "imok"}}};
  };
  ::fake::Peer leader(peer_answering("srvr_leader.txt", "conf_leader.txt", "mntr_leader.txt"));
  ::fake::Peer follower(peer_answering("srvr_follower.txt", "conf_follower.txt", "mntr_follower.txt"));
  ::fake::Peer refusing(
      peer_answering("srvr_whitelist_ruok_only.txt", "conf_whitelist_ruok_only.txt", "mntr_whitelist_ruok_only.txt"));
  ::fake::Peer not_serving(peer_answering("srvr_no_quorum.txt", "conf_no_quorum.txt", "mntr_no_quorum.txt"));
  std::map<std::string, const ::fake::Peer*> peers{
      {"leader", &leader}, {"follower", &follower}, {"refusing", &refusing}, {"not-serving", &not_serving}};
  std::vector<ServerAddress> servers;
  for (const auto& [name, peer] : peers) servers.push_back(at(*peer, name));

  auto limits = limits_for(5s);
  limits.verdict_words_only = true;
  std::map<std::string, int> connections_when_reported;
  auto probes = probe_servers(test_executor(), servers, limits, system_resolver(), [&](const ServerProbe& probe) {
    CHECK(connections_when_reported.count(probe.address.name) == 0);  // once each
    CHECK(probe.srvr);                                                // with srvr's answer
    connections_when_reported[probe.address.name] = peers.at(probe.address.name)->connections();
  });

  CHECK(leader.connections() == 3);       // srvr and conf, then mntr (its synced followers)
  CHECK(follower.connections() == 2);     // srvr and conf: its membership leaves mntr nothing to decide
  CHECK(refusing.connections() == 3);     // conf refused: mntr for the voters' count, refused too
  CHECK(not_serving.connections() == 3);  // srvr and conf (its answer dropped), then ruok
  for (const auto& [name, peer] : peers) {
    INFO(name);
    CHECK(connections_when_reported[name] <= 2);  // srvr (and conf beside it): before the words after them
    CHECK(peer->max_concurrent() <= 2);
  }
  const auto& by_name = [&](const std::string& name) -> const ServerProbe& {
    return *std::ranges::find(probes, name, [](const ServerProbe& p) { return p.address.name; });
  };
  CHECK(by_name("leader").mntr->facts.synced_followers == 4);
  CHECK(by_name("follower").conf->facts.server_id);
  CHECK_FALSE(by_name("follower").isro);
  CHECK(by_name("refusing").refused_words == std::vector<std::string>{"conf", "mntr"});
  CHECK(by_name("not-serving").ruok->facts.imok);
  CHECK_FALSE(by_name("not-serving").conf);  // not serving: conf decides nothing there, as before
}

TEST_CASE(
    "probe_servers, verdict words only: a server allowing this address one connection still answers "
    "srvr and conf, each word cut off asked again alone") {
  ::fake::Peer one_at_a_time({{"srvr", {Behaviour::answer_late, capture("srvr_follower.txt"), 100ms}},
                              {"conf", {Behaviour::answer_late, capture("conf_follower.txt"), 100ms}}});
  one_at_a_time.limit_connections(1);
  auto limits = limits_for(5s);
  limits.verdict_words_only = true;
  auto probes = probe_servers(test_executor(), {at(one_at_a_time, "one")}, limits);
  CHECK(one_at_a_time.cut_off() == 1);  // the second of srvr and conf, whichever it was
  CHECK(probes[0].srvr_exchange.error == ProbeError::ok);
  CHECK(mode_of(probes[0]) == Mode::follower);
  REQUIRE(probes[0].conf);
  CHECK(probes[0].conf->facts.server_id);
  CHECK(probes[0].refused_words.empty());
}

TEST_CASE("probe_servers, verdict words only: conf is asked beside a slow srvr, on a second connection") {
  ::fake::Peer slow({{"srvr", {Behaviour::answer_late, capture("srvr_follower.txt"), 300ms}},
                     {"conf", {Behaviour::answer, capture("conf_follower.txt")}}});
  auto limits = limits_for(5s);
  limits.verdict_words_only = true;
  auto probes = probe_servers(test_executor(), {at(slow, "slow")}, limits);
  CHECK(slow.max_concurrent() == 2);  // conf answered while srvr was still coming
  CHECK(slow.connections() == 2);
  CHECK(mode_of(probes[0]) == Mode::follower);
  REQUIRE(probes[0].conf);
  CHECK(probes[0].conf->facts.server_id);
}

// The sidecar's: its long-lived session is a connection already, so conf waits for srvr's answer,
// and the server is reported (its round-trip session starts) after its last word.
TEST_CASE(
    "probe_servers, verdict words one connection at a time: conf waits for a slow srvr, and the server is "
    "reported after its last word") {
  ::fake::Peer slow({{"srvr", {Behaviour::answer_late, capture("srvr_follower.txt"), 300ms}},
                     {"conf", {Behaviour::answer, capture("conf_follower.txt")}}});
  auto limits = limits_for(5s);
  limits.verdict_words_only = true;
  limits.one_connection_at_a_time = true;
  int connections_when_reported = 0;
  auto probes = probe_servers(test_executor(), {at(slow, "slow")}, limits, system_resolver(),
                              [&](const ServerProbe&) { connections_when_reported = slow.connections(); });
  CHECK(connections_when_reported == 2);
  CHECK(slow.max_concurrent() == 1);
  CHECK(slow.connections() == 2);
  CHECK(mode_of(probes[0]) == Mode::follower);
  REQUIRE(probes[0].conf);
  CHECK(probes[0].conf->facts.server_id);
}
