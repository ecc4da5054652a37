#pragma once
// One run against the ledger as free steps (internal to model/judge, for apply_ledger and a test
// that runs them shuffled). Each step reads the run and writes its own part of the next ledger and
// its findings; none reads what another wrote, so their order cannot matter. A loss that two steps
// see is one sticky record: the one of the lowest rank (the zxid's, then the marker's).

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/judge/ledger_update.hpp"

namespace zkverify {

struct LedgerRun {
  const EnsembleFacts& facts;
  const Report& report;
  const std::optional<Ledger>& previous;
  const std::string& now;
};

struct LedgerDraft {
  LedgerOutcome out;                                // the previous ledger, as the steps change it
  std::vector<std::pair<int, std::string>> losses;  // this run's data losses: rank, message
};

using LedgerStep = void (*)(const LedgerRun& run, LedgerDraft& draft);
// Every step apply_ledger runs, in the order their findings print.
std::span<const LedgerStep> ledger_steps();

// The draft a run starts from (the previous ledger, updated now) and the outcome its steps made (a
// loss seen this run recorded, unless one already was).
LedgerDraft start_draft(const LedgerRun& run);
LedgerOutcome finish_draft(const LedgerRun& run, LedgerDraft draft);

}  // namespace zkverify
