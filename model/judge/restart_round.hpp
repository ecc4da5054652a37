#pragma once
// The restart round the ledger keeps between commands: approvals in flight, and the servers already
// restarted. Pure: over the Ledger and a Report.

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "model/judge/ledger.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// The restart round in the ledger. An approval is in flight from the moment it is given until a check
// sees its server down and then serving again, step confirms the restart, or the lease runs out
// (an approval nobody acted on); while in flight the server counts as going down for other approvals,
// so two concurrent approvals cannot together take the quorum.
inline constexpr std::chrono::minutes kApprovalLease{10};

// The servers other than `except` whose approvals are in flight at `now`.
std::set<std::string> going_down(const Ledger& ledger, const std::string& except,
                                 std::chrono::system_clock::time_point now);
// `name` was approved at `now` (ISO 8601), as `report` saw it: in flight from now on.
void approve_in_flight(Ledger& ledger, const Report& report, const std::string& name, const std::string& now);
// `name` restarted and serves again: it joins the round (which ends once every server in `servers` is
// in it) and is no longer in flight.
void record_restarted(Ledger& ledger, const std::string& name, const std::vector<ServerRow>& servers);
// Follows each in-flight approval with a check's report at `now`: done when the server was seen down
// and is back, or serves with a lower srvr "Received" count than at the approval (it restarted
// between two checks); dropped when expired.
void follow_approvals(Ledger& ledger, const Report& report, const std::string& now);

}  // namespace zkverify
