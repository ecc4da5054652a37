#pragma once
// Builders of synthetic facts for the pure checks: an ensemble as a test wants to see it.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "model/facts/facts.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/smoke_judge.hpp"

namespace synthetic {

using namespace zkverify;

inline ServerProbe server(const std::string& name, Mode mode, std::uint64_t zxid, int id = 0) {
  ServerProbe probe;
  probe.address = {name, "127.0.0.1", 2181, std::nullopt};
  probe.srvr_exchange.latency = std::chrono::microseconds(1500);
  probe.srvr = Reply<SrvrFacts>{ProbeError::ok, SrvrFacts{"3.8.0", Zxid{zxid}, mode, 5, 1, 0, std::nullopt}, {}};
  if (id) {
    ConfFacts conf;
    conf.server_id = id;
    probe.conf = Reply<ConfFacts>{ProbeError::ok, conf, {}};
  }
  return probe;
}

inline ServerProbe unreachable(const std::string& name) {
  ServerProbe probe;
  probe.address = {name, "127.0.0.1", 2181, std::nullopt};
  probe.srvr_exchange.error = ProbeError::connect_refused;
  return probe;
}

inline ServerProbe not_serving(const std::string& name) {
  ServerProbe probe;
  probe.address = {name, "127.0.0.1", 2181, std::nullopt};
  probe.srvr = Reply<SrvrFacts>{ProbeError::not_serving, {}, {}};
  probe.ruok = Reply<RuokFacts>{ProbeError::ok, {true}, {}};
  return probe;
}

// A round trip through `writer` that every listed server read back, in `epoch`.
inline RoundTrip round_trip(const std::vector<ServerProbe>& probes, const std::string& writer, std::uint32_t epoch) {
  RoundTrip trip;
  trip.writer = writer;
  trip.path = "/zkverify/roundtrip-0000000001";
  trip.namespace_error = ZkError::ok;
  trip.write_error = ZkError::ok;
  trip.write_zxid = Zxid{(std::uint64_t{epoch} << 32) | 7};
  trip.removal_error = ZkError::ok;
  int id = 0;
  for (const auto& probe : probes) {
    ++id;
    if (!probe.srvr || probe.srvr->error != ProbeError::ok) continue;
    ReadBack read;
    read.server = probe.address.name;
    read.error = ZkError::ok;
    read.session_server_id = id;
    read.bytes_match = true;
    read.read_mzxid = trip.write_zxid;
    trip.reads.push_back(read);
  }
  return trip;
}

// Five voters, pzoo-1 leading, all on epoch 1, with a complete round trip.
inline zkverify::EnsembleFacts healthy_five() {
  zkverify::EnsembleFacts facts;
  facts.probes = {server("pzoo-0", Mode::follower, 0x100000005), server("pzoo-1", Mode::leader, 0x100000006),
                  server("pzoo-2", Mode::follower, 0x100000006), server("zoo-0", Mode::follower, 0x100000006),
                  server("zoo-1", Mode::follower, 0x100000006)};
  facts.round_trip = round_trip(facts.probes, "pzoo-1", 1);
  return facts;
}

// The first finding with the code named `code` ("duplicate-id"), or nullptr.
inline const Finding* find(const std::vector<Finding>& findings, const std::string& code) {
  auto it = std::ranges::find_if(findings, [&](const Finding& f) { return to_string(f.code) == code; });
  return it == findings.end() ? nullptr : &*it;
}
inline const Finding* find(const Report& report, const std::string& code) { return find(report.findings, code); }

// The smoke case with the id `id` ("ephemeral-cleanup"); the test fails when there is none.
inline const CaseResult& find_case(const std::vector<CaseResult>& cases, const std::string& id) {
  auto found = std::ranges::find_if(cases, [&](const CaseResult& one) { return one.id == id; });
  REQUIRE(found != cases.end());
  return *found;
}

// The server ids 1..7 whose bits are set in BITS (bit 0 is id 1): every subset of a 7-server
// ensemble, for the tests that walk them all.
inline std::set<int> ids_of(unsigned bits) {
  std::set<int> ids;
  for (int id = 1; id <= 7; ++id)
    if (bits & (1U << (id - 1))) ids.insert(id);
  return ids;
}

}  // namespace synthetic
