#include "verifier/commands/ensemble.hpp"

#include <pwd.h>
#include <unistd.h>

#include <ctime>
#include <ostream>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probes/four_letter.hpp"
#include "probes/round_trip.hpp"
#include "verifier/render/durations.hpp"
#include "verifier/render/text.hpp"
#include "verifier/store/state_file.hpp"

namespace zkverify::verifier {

using probes::Clock;

void validate_namespace(const std::string& path) {
  auto fail = [&](std::string_view why) {
    return std::invalid_argument(fmt::format("--namespace '{}': {}", path, why));
  };
  if (path.empty() || path.front() != '/') throw fail("must be an absolute znode path, like /zkverify");
  if (path == "/") throw fail("must not be the root: zkverify writes only below its own namespace");
  if (path.back() == '/') throw fail("must not end with '/'");
  if (path.find("//") != std::string::npos) throw fail("has an empty path component");
  if (path == "/zookeeper" || path.starts_with("/zookeeper/")) throw fail("/zookeeper is reserved by the server");
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) throw fail("has a control character");
}

void validate(const EnsembleOptions& options) {
  if (options.output != "text" && options.output != "json")
    throw std::invalid_argument(fmt::format("--output '{}': use text or json", options.output));
  validate_namespace(options.namespace_path);
  if (options.timeout <= std::chrono::milliseconds::zero()) throw std::invalid_argument("--timeout must be positive");
  probes::parse_server_list(options.servers);
}

void validate(const QuorumOptions& options) {
  validate(static_cast<const EnsembleOptions&>(options));
  if (options.stable < 1) throw std::invalid_argument(fmt::format("--stable {}: must be at least 1", options.stable));
  if (options.reset_state && !options.state_file) throw std::invalid_argument("--reset-state needs --state FILE");
}

std::string iso_now() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string render(const Report& report, const std::string& output) {
  return output == "json" ? render_json(report) : render_text(report);
}

namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string make_payload() {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return fmt::format("zkverify {} host={} pid={} unix_ms={} nonce={:016x}", ZKVERIFY_VERSION, host_name(), getpid(),
                     now.count(), std::random_device{}());
}

std::string marker_content() {
  const auto* user = getpwuid(getuid());
  return fmt::format("zkverify durability marker, written {} by {}@{} (zkverify {}). Its loss means the ensemble "
                     "lost data.",
                     iso_now(), user ? user->pw_name : "?", host_name(), ZKVERIFY_VERSION);
}

}  // namespace

EnsembleFacts gather(const EnsembleOptions& options, const std::optional<MarkerPlan>& marker) {
  auto servers = probes::parse_server_list(options.servers);
  if (options.admin_ports) probes::assign_admin_ports(servers, *options.admin_ports);

  // The budget: probes get half (all servers at once, so a stalled one costs at most that), the round
  // trip what is left; a tenth is kept back for closing sessions and printing.
  bool sessions = !options.no_write || marker;
  auto start = Clock::now();
  auto end = start + options.timeout * 9 / 10;
  auto probe_end = sessions ? start + options.timeout / 2 : end;
  auto probe_span = std::chrono::duration_cast<std::chrono::milliseconds>(probe_end - start);

  EnsembleFacts facts;
  probes::ProbeLimits limits;
  limits.deadline = probe_end;
  limits.connect_timeout = probe_span;
  limits.exchange_timeout = probe_span;
  facts.probes = probes::probe_servers(servers, limits);
  facts.write_skipped = options.no_write;
  if (!sessions) return facts;

  probes::RoundTripPlan plan;
  std::optional<std::size_t> leader;
  for (const auto& probe : facts.probes) {
    if (!probe.srvr || probe.srvr->kind != probes::ReplyKind::facts) continue;
    auto mode = probe.srvr->facts.mode;
    if (mode != probes::Mode::leader && mode != probes::Mode::follower && mode != probes::Mode::observer) continue;
    if (mode == probes::Mode::leader) leader = plan.servers.size();
    plan.servers.push_back(probe.address);
  }
  if (plan.servers.empty()) return facts;
  plan.writer = leader.value_or(0);
  plan.namespace_path = options.namespace_path;
  plan.write = !options.no_write;
  plan.payload = make_payload();
  if (marker) {
    plan.marker_path = marker->path;
    if (!options.no_write) plan.marker_content = marker->create_with;
  }
  plan.deadline = end;
  facts.round_trip = probes::run_round_trip(plan);
  return facts;
}

CheckResult check_once(const QuorumOptions& options, const std::optional<Ledger>& ledger, bool use_ledger) {
  std::optional<MarkerPlan> marker;
  if (use_ledger) {
    marker = MarkerPlan{marker_path(options.namespace_path), std::nullopt};
    if (!ledger || !ledger->marker) marker->create_with = marker_content();
    else marker->path = ledger->marker->path;
  }
  auto facts = gather(options, marker);
  CheckResult result{judge(facts), std::nullopt};
  if (!use_ledger) return result;
  auto outcome = apply_ledger(facts, result.report, ledger, iso_now());
  for (auto& finding : outcome.findings) result.report.findings.push_back(std::move(finding));
  finalize(result.report);
  result.next_ledger = std::move(outcome.next);
  return result;
}

Report check_and_record(const QuorumOptions& options, bool& reset_pending, std::ostream& err) {
  if (!options.state_file) return check_once(options, std::nullopt, false).report;
  StateFile state(*options.state_file, options.timeout);
  std::optional<Ledger> ledger;
  if (auto json = state.read()) {
    try {
      ledger = ledger_from_json(*json);
    } catch (const std::invalid_argument& error) {
      if (!reset_pending)
        throw StateFileError(fmt::format("state file {} is not a zkverify ledger: {}; fix it, or start over with "
                                         "--reset-state",
                                         state.path().string(), error.what()));
      err << fmt::format("zkverify: --reset-state: discarding {}, which was not a readable ledger\n",
                         state.path().string());
    }
  }
  if (reset_pending) {
    if (ledger)
      err << fmt::format("zkverify: --reset-state: forgetting the ledger {}: {}\n", state.path().string(),
                         describe_forgotten(*ledger));
    ledger.reset();
    reset_pending = false;
  }
  auto result = check_once(options, ledger, true);
  state.write(to_json(*result.next_ledger));
  return std::move(result.report);
}

namespace {

std::string what_fails(const Report& report) {
  std::vector<std::string> parts;
  for (const auto& finding : report.findings) {
    if (finding.severity == Severity::info) continue;
    parts.push_back(finding.server.empty() ? finding.code : fmt::format("{} {}", finding.code, finding.server));
  }
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", "));
}

bool has_data_loss(const Report& report) {
  return std::ranges::any_of(report.findings, [](const Finding& f) { return f.code == "data-loss"; });
}

}  // namespace

int run_quorum(const QuorumOptions& options, std::ostream& out, std::ostream& err) {
  bool reset_pending = options.reset_state;
  auto started = Clock::now();
  Report report;
  try {
    validate(options);
    if (!options.wait) {
      report = check_and_record(options, reset_pending, err);
    } else {
      auto give_up = started + *options.wait;
      int streak = 0;
      for (int attempt = 1;; ++attempt) {
        report = check_and_record(options, reset_pending, err);
        streak = report.verdict == Verdict::healthy ? streak + 1 : 0;
        auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
        err << fmt::format("zkverify: [{:>7}] attempt {}: {}{}, healthy {}/{} in a row\n", format_duration(elapsed),
                           attempt, to_string(report.verdict), what_fails(report), streak, options.stable);
        err.flush();
        if (streak >= options.stable) break;
        if (has_data_loss(report)) {  // lost data does not come back by waiting
          err << "zkverify: data loss: not waiting any longer\n";
          break;
        }
        if (Clock::now() + options.interval >= give_up) {
          err << fmt::format("zkverify: --wait {} is over\n", format_duration(*options.wait));
          break;
        }
        std::this_thread::sleep_for(options.interval);
      }
    }
  } catch (const std::invalid_argument& error) {  // usage errors and StateFileError
    err << "zkverify quorum: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::runtime_error& error) {  // the state file could not be written; the old one stands
    err << "zkverify quorum: " << error.what() << "\n";
    return kExitIoError;
  }
  out << render(report, options.output);
  out.flush();
  return exit_code(report.verdict);
}

}  // namespace zkverify::verifier
