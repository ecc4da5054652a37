#pragma once
// The clients as the servers count them during a step: where the restarted server's connections
// went (its srvr count and the others', polled) and whether the tree's ephemeral nodes fell (mntr
// before COMMAND and after the recovery). Evidence, said as info: it names no client, and clients
// that wait for their server, or come and go, are no fault.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/books/restart_timeline.hpp"
#include "model/facts/registrations.hpp"
#include "model/judge/ledger.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// "pzoo-1's 12 client connections moved to 2 servers within 1.2 s of its stop (...)", or how many
// did by when; none when the server had no clients or its connections were not counted.
std::optional<Finding> connections_moved_finding(const std::string& server,
                                                 const std::optional<ConnectionsMoved>& moved);

// ephemerals-fell when `after` is below `before` (counts one server gave, with no check's probe node
// in flight); none when either is unknown or it did not fall.
std::optional<Finding> ephemerals_fell_finding(const std::string& server, std::optional<std::int64_t> before,
                                               std::optional<std::int64_t> after, const std::string& counted_on);

// election-outlasts-timeouts before the leader's step: the sessions every server lists (`cons`) whose
// timeout is no longer than the last election's time without a leader, named by the registrations
// `reads` has for them; none when the ledger saw no election or no session is that short.
std::optional<Finding> election_risk(const std::string& leader, const std::optional<Election>& last,
                                     const std::vector<ConsFacts>& cons,
                                     const std::optional<std::vector<ClientPathRead>>& reads);

}  // namespace zkverify
