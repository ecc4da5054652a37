#include "model/judge/watch_judge.hpp"

#include <fmt/format.h>

#include "model/facts/text.hpp"
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
    add(FindingCode::ephemeral_lost,
        fmt::format("{} vanished from live sessions",
                    counted(totals.ephemerals_lost - totals.sessions_expired, "ephemeral znode")));
  if (totals.writes_lost > 0)
    add(FindingCode::writes_lost,
        fmt::format("{} {} missing after sync", counted(totals.writes_lost, "acknowledged write"),
                    was_or_were(totals.writes_lost)));
  if (totals.stale_reads > 0)
    add(FindingCode::stale_read,
        fmt::format("{} after sync missed acknowledged writes", counted(totals.stale_reads, "read-back")));
  if (totals.writes_out_of_order > 0)
    add(FindingCode::writes_out_of_order,
        fmt::format("{} {} applied before writes their client had sent earlier",
                    counted(totals.writes_out_of_order, "write"), was_or_were(totals.writes_out_of_order)));
  if (max_unavailable && totals.longest_unavailable > *max_unavailable)
    add(FindingCode::unavailable_too_long,
        fmt::format("writes failed for {} in a row; --max-unavailable is {}",
                    format_duration(totals.longest_unavailable), format_duration(*max_unavailable)));
  return findings;
}

}  // namespace zkverify
