#include "verifier/check/ensemble_check.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <memory>
#include <ostream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/judge/ledger_update.hpp"
#include "model/render/json_text.hpp"
#include "model/render/report_view.hpp"
#include "model/render/timeline_view.hpp"
#include "probes/actor.hpp"
#include "probes/four_letter.hpp"
#include "probes/host.hpp"
#include "probes/kerberos.hpp"
#include "probes/round_trip.hpp"
#include "verifier/store/ledger_file.hpp"

namespace zkverify::verifier {

std::string iso_now() { return iso8601(std::chrono::system_clock::now()); }

std::string render(const Report& report, OutputFormat output, bool verbose, bool trace) {
  if (output == OutputFormat::json) {
    if (!trace || !report.timeline) return render_json(report);
    auto json = to_json(report);
    json["timeline"] = timeline_json(*report.timeline);
    return json_text(json) + "\n";
  }
  auto text = render_text(report);
  if (verbose && report.timings) text += "\n" + render_timings_text(*report.timings);
  if (trace && report.timeline) text += "\n" + render_timeline_text(*report.timeline);
  return text;
}

namespace {

std::chrono::microseconds since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
}

// The judgement of `facts`, with the time it took to gather them.
Report judged(const EnsembleFacts& facts) {
  auto report = judge(facts);
  report.timings = facts.timings;
  report.timeline = timeline_of(facts.started, facts.probes, facts.round_trip);
  return report;
}

std::string make_payload() {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return fmt::format("zkverify {} host={} pid={} unix_ms={} nonce={:016x}", ZKVERIFY_VERSION, probes::local_host_name(),
                     getpid(), now.count(), std::random_device{}());
}

// This process's user name ("?" when the passwd database has none).
std::string user_name() {
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 4096> buffer{};
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) return "?";
  return found->pw_name;
}

std::string marker_content() {
  return fmt::format(
      "zkverify durability marker, written {} by {}@{} (zkverify {}). Its loss means the ensemble "
      "lost data.",
      iso_now(), user_name(), probes::local_host_name(), ZKVERIFY_VERSION);
}

// The round trip goes through the serving servers, written through the leader when there is one.
probes::RoundTripPlan round_trip_plan(const EnsembleOptions& options, const std::vector<ServerProbe>& probed,
                                      const std::optional<MarkerPlan>& marker) {
  probes::RoundTripPlan plan;
  std::optional<std::size_t> leader;
  for (const auto& probe : probed) {
    if (!probes::joins_round_trip(probe)) continue;
    if (mode_of(probe) == Mode::leader) leader = plan.servers.size();
    plan.servers.push_back(probe.address);
  }
  plan.writer = leader.value_or(0);
  plan.namespace_path = options.namespace_path;
  plan.write = !options.no_write;
  plan.payload = make_payload();
  plan.client_paths = options.client_paths;
  if (marker) {
    plan.marker_path = marker->path;
    if (!options.no_write) plan.marker_content = marker->create_with;
  }
  return plan;
}

// The servers' probes as probe_servers reports them (for quorum: once srvr is in), collected on a
// strand of their own for the round trip's plan on the caller's thread, which need not wait for the
// last words. `on_report` runs on the strand, and not after take() has run there: what it touches
// (the sessions opened ahead) is the caller's alone from then on.
class ReportedProbes final : public probes::ActorCore {
 public:
  ReportedProbes(probes::Executor& executor, const std::vector<ServerAddress>& servers,
                 std::function<void(const ServerProbe&)> on_report)
      : ActorCore(executor), on_report_(std::move(on_report)) {
    for (const auto& server : servers) order_.push_back(server.name);
    probes_.resize(servers.size());
  }

  // On the strand: one server's report (the first of each counts).
  void add(const ServerProbe& probe) {
    if (closed_) return;
    auto at = std::ranges::find(order_, probe.address.name) - order_.begin();
    if (at == static_cast<std::ptrdiff_t>(order_.size()) || probes_[at]) return;
    on_report_(probe);
    probes_[at] = probe;
    if (std::ranges::all_of(probes_, [](const auto& one) { return one.has_value(); })) close();
  }

  // On the strand: no more reports (all are in, or probing ended).
  void close() {
    closed_ = true;
    if (!all_in_set_.test_and_set()) all_in_.set_value();
  }

  // From the caller's thread: every server's probe, in the listed order, once all are in (or
  // closed); by `deadline`, those that are.
  static std::vector<ServerProbe> wait_all(const std::shared_ptr<ReportedProbes>& self, Clock::time_point deadline) {
    self->all_in_future_.wait_until(deadline);
    return probes::ask_now(self, [](ReportedProbes& reported) { return reported.take(); });
  }

 private:
  std::vector<ServerProbe> take() {
    close();
    std::vector<ServerProbe> in;
    for (auto& probe : probes_)
      if (probe) in.push_back(std::move(*probe));
    return in;
  }

  std::function<void(const ServerProbe&)> on_report_;
  std::vector<std::string> order_;
  std::vector<std::optional<ServerProbe>> probes_;  // by position in the list
  bool closed_ = false;
  std::atomic_flag all_in_set_;
  std::promise<void> all_in_;
  std::shared_future<void> all_in_future_ = all_in_.get_future().share();
};

// Every probe of the run ends by `probe_end`, each step of one within the span from `start`.
probes::ProbeLimits probe_limits(const EnsembleOptions& options, const std::shared_ptr<const probes::TlsClient>& tls,
                                 Clock::time_point start, Clock::time_point probe_end) {
  auto span = std::chrono::duration_cast<std::chrono::milliseconds>(probe_end - start);
  probes::ProbeLimits limits;
  limits.deadline = probe_end;
  limits.connect_timeout = span;
  limits.exchange_timeout = span;
  limits.verdict_words_only = options.verdict_words_only;
  limits.one_connection_at_a_time = options.one_connection_at_a_time;
  limits.tls = tls;
  return limits;
}

// What start_probe_servers ended with, and when.
struct Probed {
  std::vector<ServerProbe> probes;
  std::chrono::microseconds took{};
};

// zkverify's Kerberos credentials (GSSAPI only), read on a worker beside the probes: a keytab's
// read asks the KDC, which may not answer.
std::future<KerberosFacts> read_kerberos_aside(const ConnectionOptions& connection, probes::Executor& executor) {
  if (!uses_kerberos(connection)) return {};
  auto read = std::make_shared<std::promise<KerberosFacts>>();
  auto future = read->get_future();
  executor.run_blocking([read, keytab = connection.sasl_keytab] { read->set_value(probes::read_kerberos(keytab)); });
  return future;
}

std::optional<KerberosFacts> kerberos_by(std::future<KerberosFacts>& reading, Clock::time_point deadline) {
  if (!reading.valid()) return std::nullopt;
  if (reading.wait_until(deadline) == std::future_status::ready) return reading.get();
  KerberosFacts late;
  late.error = "Kerberos did not answer by the check's deadline (its KDC?)";
  return late;
}

}  // namespace

EnsembleFacts gather(const EnsembleOptions& options, probes::Executor& executor, probes::KeeperFactory& keepers,
                     const std::shared_ptr<const probes::TlsClient>& tls, const std::optional<MarkerPlan>& marker) {
  // The budget: probes get half (all servers at once, so a stalled one costs at most that), the round
  // trip what is left; a tenth is kept back for closing sessions and printing.
  bool sessions = !options.no_write || marker;
  auto start = Clock::now();
  auto end = start + options.timeout * 9 / 10;
  auto probe_end = sessions ? start + options.timeout / 2 : end;

  EnsembleFacts facts;
  facts.started = start;
  facts.given_lists = options.given_lists;
  auto limits = probe_limits(options, tls, start, probe_end);
  auto kerberos = read_kerberos_aside(options.connection, executor);
  if (tls)
    facts.tls = TlsCheckFacts{tls->client_certificate(), options.connection.tls_expiry_warning,
                              std::chrono::system_clock::now()};
  // Each serving server's session starts once it is reported (see ProbedCallback: for quorum as
  // soon as srvr says it serves, beside its other words, one at a time), while the others are
  // probed; the round trip starts once every server was reported, while the last words still run.
  probes::SessionsAhead ahead(keepers, probes::RoundTripPlan{}.session_timeout);
  // Shared with the probes' callbacks, which may outlive this call (a bug's throw below); closed
  // before it returns, so that on_report, which touches `ahead`, never runs after.
  auto reported = std::make_shared<ReportedProbes>(executor, options.servers, [&](const ServerProbe& probe) {
    if (sessions && probes::joins_round_trip(probe)) ahead.open(probe.address);
  });
  // The end's callback owns what it writes: it may run after a stop abandoned this gather.
  auto probed = std::make_shared<std::promise<Probed>>();
  auto probing = probed->get_future();
  auto abandon = probes::start_probe_servers(
      executor, options.servers, limits, probes::system_resolver(),
      [reported](const ServerProbe& probe) { tell(reported, [probe](ReportedProbes& self) { self.add(probe); }); },
      [probed, reported, start](std::vector<ServerProbe> probes) {
        tell(reported, [](ReportedProbes& self) { self.close(); });  // a run ended early (a stop) reports no more
        probed->set_value(Probed{std::move(probes), since(start)});
      });
  // The sidecar's SIGTERM ends its cycle at once (the sessions' stop ends the round trip).
  probes::StopSubscription on_stop(options.abandoned_by_stop ? &executor.stop() : nullptr,
                                   [abandon](int, int) { abandon(); });
  facts.write_skipped = options.no_write;
  if (sessions) {
    // probe_servers' own backstop: every server is reported by then.
    auto plan = round_trip_plan(options, ReportedProbes::wait_all(reported, probe_end + std::chrono::milliseconds(200)),
                                marker);
    plan.deadline = end;
    plan.close_deadline = start + options.timeout;
    if (!plan.servers.empty()) facts.round_trip = probes::run_round_trip(plan, keepers, &ahead);
  }
  // start_probe_servers' backstop ends it by probe_end + 200 ms; missing that by seconds is a bug.
  bool probed_in_time = probing.wait_until(probe_end + std::chrono::seconds(2)) == std::future_status::ready;
  ReportedProbes::wait_all(reported, Clock::now());  // closed: on_report, which touches `ahead`, runs no more
  if (!probed_in_time) throw std::logic_error("the probes outlived their own deadline");
  auto [probes, probe_took] = probing.get();
  facts.probes = std::move(probes);
  facts.kerberos = kerberos_by(kerberos, end);
  if (facts.round_trip) facts.timings = facts.round_trip->timings;
  facts.timings.probe = probe_took;
  facts.timings.total = since(start);
  return facts;
}

namespace {

struct CheckResult {
  Report report;
  std::optional<Ledger> next_ledger;
};

CheckResult check_with_ledger(const EnsembleOptions& options, const Context& context,
                              const std::optional<Ledger>& ledger) {
  MarkerPlan marker{marker_path(options.namespace_path), std::nullopt};
  if (!ledger || !ledger->marker) marker.create_with = marker_content();
  else marker.path = ledger->marker->path;
  auto facts = gather(options, context.executor, context.keepers, tls_client_of(context), marker);
  if (ledger)  // the roles seen before, for servers that cannot say theirs now
    for (const auto& [name, server] : ledger->servers)
      if (server.mode == to_string(ServerState::observer)) facts.remembered_observers.insert(name);
  CheckResult result{judged(facts), std::nullopt};
  auto outcome = apply_ledger(facts, result.report, ledger, iso_now());
  for (auto& finding : outcome.findings) result.report.findings.push_back(std::move(finding));
  finalize(result.report);
  result.next_ledger = std::move(outcome.next);
  return result;
}

// The ledger to compare with: the file's, or none on a first run or after --reset-state.
std::optional<Ledger> ledger_to_use(const StateFile& state, LedgerUse& use, std::ostream& err) {
  std::optional<Ledger> ledger;
  try {
    ledger = read_ledger(state);
  } catch (const Error&) {
    if (!use.reset_pending) throw;
    err << fmt::format("zkverify: --reset-state: discarding {}, which was not a readable ledger\n",
                       state.path().string());
  }
  if (use.reset_pending) {
    if (ledger)
      err << fmt::format("zkverify: --reset-state: forgetting the ledger {}: {}\n", state.path().string(),
                         describe_forgotten(*ledger));
    ledger.reset();
    use.reset_pending = false;
  }
  return ledger;
}

}  // namespace

EnsembleOptions within_what_is_left(const EnsembleOptions& options, Clock::time_point started) {
  auto left = options;
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  left.timeout = std::max(options.timeout - spent, std::chrono::milliseconds(1));
  return left;
}

Report check_and_record(const EnsembleOptions& options, LedgerUse& use, const Context& context,
                        const LedgerDecision& decide) {
  if (!use.state_file) {
    auto report = judged(gather(options, context.executor, context.keepers, tls_client_of(context)));
    Ledger scratch;
    if (decide) decide(report, scratch);
    return report;
  }
  auto started = Clock::now();
  StateFile state(*use.state_file, options.timeout);
  auto ledger = ledger_to_use(state, use, context.err);
  auto result = check_with_ledger(within_what_is_left(options, started), context, ledger);
  if (decide) decide(result.report, *result.next_ledger);
  state.write(to_json(*result.next_ledger));
  return std::move(result.report);
}

}  // namespace zkverify::verifier
