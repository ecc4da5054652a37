#pragma once
// Looking at the ensemble once: gather the facts within a deadline, judge them, and (with a state
// file) compare them with the ledger under its lock. quorum, order, safe-to-restart and step share it.

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "model/facts/failure.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/ledger.hpp"
#include "model/render/format.hpp"
#include "probes/executor.hpp"
#include "probes/keeper.hpp"
#include "verifier/check/connection.hpp"
#include "verifier/check/context.hpp"

namespace zkverify::verifier {

// What every command that looks at the ensemble takes.
struct EnsembleOptions {
  std::vector<ServerAddress> servers;  // --servers, with --admin-port applied
  // --zoo-cfg: the list each server runs with, for those that do not report theirs (3.4), by name.
  std::map<std::string, ConfFacts> given_lists;
  std::chrono::milliseconds timeout{5000};  // one check: probes and round trip together
  OutputFormat output = OutputFormat::text;
  std::string namespace_path = "/zkverify";  // checked by parse_namespace
  bool no_write = false;
  std::vector<std::string> client_paths;  // --clients: the registrations to read (kafka expanded)
  ConnectionOptions connection;           // --auth-file, --tls-*
  // Ask only the four-letter words that can change the verdict (quorum, serve); the other
  // commands ask every word, to report what each server allows.
  bool verdict_words_only = false;
  // One connection at a time to each server (words, then the session), for a command that keeps a
  // session open there (serve).
  bool one_connection_at_a_time = false;
  // A stop signal abandons the check at once (the sidecar's SIGTERM), rather than letting it end.
  bool abandoned_by_stop = false;
};

// What the durability marker needs from a round trip.
struct MarkerPlan {
  std::string path;
  std::optional<std::string> create_with;  // content, when the ledger has no marker yet
};

// Gathers the facts within options.timeout: the probes (half of it, at most), and the round trip
// from the moment every server was reported (for quorum once its srvr is in) to the deadline.
// `tls`: the probes' TLS client (tls_client_of(context)), none for plain TCP.
EnsembleFacts gather(const EnsembleOptions& options, probes::Executor& executor, probes::KeeperFactory& keepers,
                     const std::shared_ptr<const probes::TlsClient>& tls,
                     const std::optional<MarkerPlan>& marker = std::nullopt);

// `options` with the --timeout that is left since `started` (at least 1 ms: a check always runs).
EnsembleOptions within_what_is_left(const EnsembleOptions& options, Clock::time_point started);

// The ledger's side of a check.
struct LedgerUse {
  std::optional<std::string> state_file;  // none: no ledger
  bool reset_pending = false;             // --reset-state, until the first check has forgotten the ledger
};

// A decision made on a check's report while the ledger's lock is held (restart approvals), which may
// change the ledger about to be stored. Without a state file it gets a scratch ledger.
using LedgerDecision = std::function<void(const Report& report, Ledger& next)>;

// One check under the state file's lock (when there is one): read the ledger (forgetting it first
// when reset_pending, which it then clears, saying on context.err what it forgot), check, `decide`,
// store the new ledger. Waiting for the lock comes out of options.timeout.
Report check_and_record(const EnsembleOptions& options, LedgerUse& ledger, const Context& context,
                        const LedgerDecision& decide = nullptr);

// Renders per --output; text with `verbose` ends with where the time went (JSON always says it);
// with `trace`, text ends with the timeline of the check's steps and JSON has it as "timeline".
std::string render(const Report& report, OutputFormat output, bool verbose = false, bool trace = false);

// Now, as ISO 8601 UTC.
std::string iso_now();

}  // namespace zkverify::verifier
