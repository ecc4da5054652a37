#include "model/judge/watch_judge.hpp"

#include <fmt/format.h>

#include "model/facts/time_text.hpp"

namespace zkverify {

using std::chrono::milliseconds;

std::vector<Finding> judge_watch(const WatchTotals& totals, std::optional<milliseconds> max_unavailable) {
  std::vector<Finding> findings;
  auto add = [&](FindingCode code, std::string message) {
    findings.push_back(make_finding(code, "", std::move(message)));
  };
  if (totals.sessions_expired > 0)
    add(FindingCode::session_expired,
        fmt::format("{} of {} client sessions expired: their ephemeral znodes and watches are gone",
                    totals.sessions_expired, totals.sessions));
  if (totals.ephemerals_lost > totals.sessions_expired)
    add(FindingCode::ephemeral_lost, fmt::format("{} ephemeral znodes vanished from live sessions",
                                                 totals.ephemerals_lost - totals.sessions_expired));
  if (totals.writes_lost > 0)
    add(FindingCode::writes_lost, fmt::format("{} acknowledged writes were missing after sync", totals.writes_lost));
  if (totals.stale_reads > 0)
    add(FindingCode::stale_read,
        fmt::format("{} read-backs after sync missed acknowledged writes", totals.stale_reads));
  if (totals.writes_out_of_order > 0)
    add(FindingCode::writes_out_of_order,
        fmt::format("{} writes were applied before writes their client had sent earlier", totals.writes_out_of_order));
  if (max_unavailable && totals.longest_unavailable > *max_unavailable)
    add(FindingCode::unavailable_too_long,
        fmt::format("writes failed for {} in a row; --max-unavailable is {}",
                    format_duration(totals.longest_unavailable), format_duration(*max_unavailable)));
  return findings;
}

}  // namespace zkverify
