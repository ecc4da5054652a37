#include "verifier/sidecar/cycle.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/judge/checks.hpp"
#include "probes/four_letter.hpp"
#include "verifier/check/ensemble_check.hpp"

namespace zkverify::verifier {

namespace {

// --no-write's proof: the local server's own word on its Zab phase, asked after gather (so the server
// still sees one connection at a time): mntr's zk_peer_state, else the AdminServer's zabstate when
// it has an admin port. None when neither answers.
std::optional<LocalPhase> local_phase(probes::Executor& executor, const EnsembleOptions& options,
                                      const std::string& local, Clock::time_point deadline,
                                      const std::shared_ptr<const probes::TlsClient>& tls) {
  auto server = std::ranges::find(options.servers, local, &ServerAddress::name);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (server == options.servers.end() || left <= std::chrono::milliseconds(0)) return std::nullopt;
  probes::ProbeLimits limits;
  limits.deadline = deadline;
  limits.connect_timeout = left;
  limits.exchange_timeout = left;
  limits.tls = tls;
  auto mntr = probes::ask_word(executor, *server, "mntr", limits);
  if (mntr.error == ProbeError::ok)
    if (auto state = parse_peer_state(mntr.reply)) return LocalPhase{SyncProof::peer_state, *state};
  if (!server->admin_port || Clock::now() >= deadline) return std::nullopt;
  auto zab = probes::ask_admin(executor, *server, "zabstate", limits);
  if (zab.error != ProbeError::ok) return std::nullopt;
  return zabstate_phase(zab.reply);
}

}  // namespace

CycleResult run_cycle(const EnsembleOptions& options, const std::string& local, probes::Executor& executor,
                      probes::KeeperFactory& keepers, const std::shared_ptr<const probes::TlsClient>& tls) {
  auto started = Clock::now();
  auto facts = gather(options, executor, keepers, tls);
  CycleResult result;
  result.report = judge(facts);
  std::optional<LocalPhase> phase;
  if (options.no_write) phase = local_phase(executor, options, local, started + options.timeout, tls);
  result.readiness = judge_readiness(result.report, local, !options.no_write, phase);
  result.checked_at = std::chrono::system_clock::now();
  result.duration = Clock::now() - started;
  if (facts.round_trip)
    for (const auto& read : facts.round_trip->reads)
      if (read.server == local && read.error == ZkError::ok)
        result.round_trip_seconds = std::chrono::duration<double>(read.latency).count();
  return result;
}

}  // namespace zkverify::verifier
