#pragma once
// A check's timeline (--trace): every connection, TLS handshake, word, session wait, write, sync
// and read, in the order they began, in milliseconds from the check's start, so that the critical
// path of one run can be read off it.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/facts/facts.hpp"

namespace zkverify {

// The probes' and the round trip's steps, in the order they began (ties: the one that ended first).
Timeline timeline_of(Clock::time_point origin, const std::vector<ServerProbe>& probes,
                     const std::optional<RoundTrip>& round_trip);
// "timeline (ms from the start):" and one line a step: "   0.4 -   2.9   2.5  pzoo-0  srvr: connect".
std::string render_timeline_text(const Timeline& timeline);
// [{"server": "pzoo-0", "step": "srvr: connect", "start_ms": 0.4, "end_ms": 2.9}, ...], 0.1 ms steps.
nlohmann::json timeline_json(const Timeline& timeline);

}  // namespace zkverify
