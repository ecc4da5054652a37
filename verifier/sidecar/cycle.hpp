#pragma once
// One sidecar cycle: the same facts and judgement as `quorum` (gather, judge), plus the local
// server's readiness. The round trip's read on the local server goes through one long-lived
// session pinned to it (LocalSessionLender), so that server sees at most that session and one
// four-letter-word connection from the sidecar: never more than 2 (maxClientCnxns is per IP).

#include <string>
#include "probes/io.hpp"

#include "model/judge/sidecar_status.hpp"
#include "probes/keeper.hpp"
#include "verifier/check/ensemble_check.hpp"

namespace zkverify::verifier {

// Looks once: gather and judge as quorum does, then the local readiness. `keepers` should be a
// LocalSessionLender for serve (any factory for probe).
// `tls`: the probes' TLS client, none for plain TCP.
CycleResult run_cycle(const EnsembleOptions& options, const std::string& local, probes::Executor& executor,
                      probes::KeeperFactory& keepers, const std::shared_ptr<const probes::TlsClient>& tls);

}  // namespace zkverify::verifier
