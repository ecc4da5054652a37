#pragma once
// One run against the ledger: this run's facts and report compared with what earlier runs saw, the
// findings that says (data loss, a node count halved, a leader, epoch or membership change), and the
// ledger to store. Pure: state_file does the I/O.

#include <optional>
#include <string>
#include <vector>

#include "model/judge/ensemble_facts.hpp"
#include "model/judge/ledger.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

struct LedgerOutcome {
  std::vector<Finding> findings;
  Ledger next;
};

// Compares this run's facts and report with the previous ledger (none on the first run) and returns
// the findings (data-loss, node-count-drop, leader/epoch/membership changes, marker-recorded) and the
// ledger to store. `now` is an ISO 8601 time.
LedgerOutcome apply_ledger(const EnsembleFacts& facts, const Report& report, const std::optional<Ledger>& previous,
                           const std::string& now);

}  // namespace zkverify
