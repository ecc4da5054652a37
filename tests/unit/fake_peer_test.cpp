#include <catch2/catch.hpp>

#include "fake_peer.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "probes/parsers.hpp"
#include "probes/round_trip.hpp"
#include "test_data.hpp"

using namespace zkverify::probes;
using Catch::Matchers::Contains;
using fake::Behaviour;

namespace {

ServerAddress at(const fake::Peer& peer, std::string name = "peer") { return {std::move(name), "127.0.0.1", peer.port(), {}}; }

ProbeLimits limits_for(std::chrono::milliseconds span) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + span;
  limits.connect_timeout = span;
  limits.exchange_timeout = span;
  return limits;
}

// A port nothing listens on: bound then closed, so the kernel refuses connections to it.
std::uint16_t closed_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

}  // namespace

TEST_CASE("a well-behaved peer: the reply, read until the server closes") {
  fake::Peer peer({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}}});
  auto exchange = ask_word(at(peer), "srvr", limits_for(std::chrono::seconds(5)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(exchange.reply == capture("srvr_leader.txt"));
}

TEST_CASE("a peer that accepts and never answers: read_timeout, named as such") {
  fake::Peer peer({{"srvr", {Behaviour::stall, ""}}});
  auto exchange = ask_word(at(peer), "srvr", limits_for(std::chrono::milliseconds(300)));
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK(describe(exchange) == "connected, but no reply within the deadline");
}

TEST_CASE("a peer that drips bytes forever: cut off at the deadline") {
  fake::Peer peer({{"srvr", {Behaviour::drip, ""}}});
  auto exchange = ask_word(at(peer), "srvr", limits_for(std::chrono::milliseconds(300)));
  CHECK(exchange.error == ProbeError::read_timeout);
  CHECK_FALSE(exchange.reply.empty());
  CHECK_THAT(describe(exchange), Contains("reply did not end within the deadline"));
}

TEST_CASE("a peer that floods: cut off at the size cap") {
  fake::Peer peer({{"srvr", {Behaviour::flood, ""}}});
  auto limits = limits_for(std::chrono::seconds(10));
  limits.max_reply_bytes = 256 * 1024;
  auto exchange = ask_word(at(peer), "srvr", limits);
  CHECK(exchange.error == ProbeError::reply_too_large);
  CHECK(exchange.reply.size() <= limits.max_reply_bytes + 4096);
  CHECK_THAT(describe(exchange), Contains("262144 bytes"));
}

TEST_CASE("nobody listening: connection refused") {
  ServerAddress nobody{"nobody", "127.0.0.1", closed_port(), {}};
  auto exchange = ask_word(nobody, "srvr", limits_for(std::chrono::seconds(2)));
  CHECK(exchange.error == ProbeError::connect_refused);
  CHECK(describe(exchange) == "connection refused");
}

TEST_CASE("a peer that closes at once: an empty reply, which srvr's parser calls malformed") {
  fake::Peer peer({{"srvr", {Behaviour::close_at_once, ""}}});
  auto exchange = ask_word(at(peer), "srvr", limits_for(std::chrono::seconds(2)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(parse_srvr(exchange.reply).error == ProbeError::malformed);
}

TEST_CASE("probe_servers with every misbehaviour at once: the good servers are still fully probed") {
  fake::Peer good({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}},
                   {"mntr", {Behaviour::answer, capture("mntr_leader.txt")}},
                   {"conf", {Behaviour::answer, capture("conf_follower.txt")}},
                   {"isro", {Behaviour::answer, "rw"}},
                   {"ruok", {Behaviour::answer, "imok"}}});
  fake::Peer refusing({{"srvr", {Behaviour::answer, capture("srvr_whitelist_ruok_only.txt")}},
                       {"mntr", {Behaviour::answer, capture("mntr_whitelist_ruok_only.txt")}},
                       {"conf", {Behaviour::answer, capture("conf_whitelist_ruok_only.txt")}},
                       {"isro", {Behaviour::answer, capture("isro_whitelist_ruok_only.txt")}},
                       {"ruok", {Behaviour::answer, "imok"}}});
  fake::Peer garbage({{"srvr", {Behaviour::answer, "\x16\x03\x01 TLS?"}}});
  fake::Peer silent({{"srvr", {Behaviour::stall, ""}}});
  fake::Peer flood({{"srvr", {Behaviour::flood, ""}}});
  fake::Peer drip({{"srvr", {Behaviour::drip, ""}}});

  std::vector<ServerAddress> servers{at(good, "good"),     at(refusing, "refusing"), at(garbage, "garbage"),
                                     at(silent, "silent"), at(flood, "flood"),       at(drip, "drip")};
  auto probes = probe_servers(servers, limits_for(std::chrono::milliseconds(800)));
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

  // A stalled server gets no further words, and no server ever sees two connections from one probe.
  CHECK(silent.connections() == 1);
  CHECK(good.connections() == 5);
  for (const auto* peer : {&good, &refusing, &garbage, &silent, &flood, &drip}) CHECK(peer->max_concurrent() <= 1);
}

TEST_CASE("a peer named by a host name is looked up, then asked") {
  fake::Peer peer({{"srvr", {Behaviour::answer, capture("srvr_leader.txt")}}});
  auto exchange = ask_word({"peer", "localhost", peer.port(), {}}, "srvr", limits_for(std::chrono::seconds(5)));
  CHECK(exchange.error == ProbeError::ok);
  CHECK(exchange.reply == capture("srvr_leader.txt"));
}

TEST_CASE("round trip through the C client: a server that accepts TCP and never answers the handshake costs the "
          "deadline, no more",
          "[round_trip][c_keeper]") {
  using namespace std::chrono_literals;
  // The handshake's first four bytes (its length) are no word the peer knows: it stalls.
  fake::Peer stalled({}, {Behaviour::stall, ""});
  RoundTripPlan plan;
  plan.servers = {{"stalled", "127.0.0.1", stalled.port(), {}}, {"stalled-by-name", "localhost", stalled.port(), {}}};
  plan.namespace_path = "/zkverify";
  plan.payload = "round trip payload";
  plan.session_timeout = 2000ms;
  SECTION("written through the numeric address") { plan.writer = 0; }
  SECTION("written through the host name") { plan.writer = 1; }
  auto start = Clock::now();
  plan.deadline = start + 500ms;
  plan.close_deadline = start + 700ms;

  auto trip = run_round_trip(plan, c_keeper_factory());
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  INFO("returned after " << elapsed.count() << " ms");
  CHECK(Clock::now() < plan.close_deadline + 300ms);
  CHECK(stalled.connections() >= 2);  // both sessions reached the peer: the wait was the handshake's
  CHECK(trip.write_error == ZkError::deadline_exceeded);
  for (const auto& read : trip.reads) CHECK(read.error == ZkError::not_attempted);
}
