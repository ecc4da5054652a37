#pragma once
// What a watch's totals mean: findings, never I/O.

#include <chrono>
#include <optional>
#include <vector>

#include "model/books/watch_book.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

// Findings (all critical): session-expired, ephemeral-lost, writes-lost, stale-read,
// writes-out-of-order, unavailable-too-long. Write failures and disconnects are not failures by
// themselves: a restart causes them.
std::vector<Finding> judge_watch(const WatchTotals& totals, std::optional<std::chrono::milliseconds> max_unavailable);

}  // namespace zkverify
