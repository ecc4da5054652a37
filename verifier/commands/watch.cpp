#include "verifier/commands/watch.hpp"

#include <csignal>
#include <ctime>
#include <mutex>
#include <ostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/judge/checks.hpp"
#include "verifier/render/durations.hpp"

namespace zkverify::verifier {

using std::chrono::milliseconds;

std::atomic<bool> g_stop_requested{false};

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = [](int) { g_stop_requested = true; };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void validate(const WatchOptions& options) {
  probes::parse_server_list(options.servers);
  validate_namespace(options.namespace_path);
  if (options.output != "text" && options.output != "json")
    throw std::invalid_argument(fmt::format("--output '{}': use text or json", options.output));
  validate(options.tuning);
}

void validate(const WatchTuning& tuning) {
  if (!(tuning.rate >= 1 && tuning.rate <= 1000))
    throw std::invalid_argument(fmt::format("--rate {}: use 1 to 1000 writes a second", tuning.rate));
}

probes::WatchSettings watch_settings(std::vector<probes::ServerAddress> servers, const std::string& namespace_path,
                                     const WatchTuning& tuning) {
  probes::WatchSettings settings;
  settings.servers = std::move(servers);
  settings.namespace_path = namespace_path;
  settings.rate = tuning.rate;
  settings.session_timeout = tuning.session_timeout;
  return settings;
}

std::vector<Finding> judge_watch(const probes::WatchTotals& totals, std::optional<milliseconds> max_unavailable) {
  std::vector<Finding> findings;
  auto add = [&](std::string code, std::string message) {
    findings.push_back({Severity::critical, std::move(code), "", std::move(message)});
  };
  if (totals.sessions_expired > 0)
    add("session-expired", fmt::format("{} of {} client sessions expired: their ephemeral znodes and watches are gone",
                                       totals.sessions_expired, totals.sessions));
  if (totals.ephemerals_lost > totals.sessions_expired)
    add("ephemeral-lost", fmt::format("{} ephemeral znodes vanished from live sessions",
                                      totals.ephemerals_lost - totals.sessions_expired));
  if (totals.writes_lost > 0)
    add("writes-lost", fmt::format("{} acknowledged writes were missing after sync", totals.writes_lost));
  if (totals.stale_reads > 0)
    add("stale-read", fmt::format("{} read-backs after sync missed acknowledged writes", totals.stale_reads));
  if (totals.writes_out_of_order > 0)
    add("writes-out-of-order", fmt::format("{} writes were applied before writes their client had sent earlier",
                                           totals.writes_out_of_order));
  if (max_unavailable && totals.longest_unavailable > *max_unavailable)
    add("unavailable-too-long", fmt::format("writes failed for {} in a row; --max-unavailable is {}",
                                            format_duration(totals.longest_unavailable), format_duration(*max_unavailable)));
  return findings;
}

namespace {

std::string iso_millis(std::chrono::system_clock::time_point when) {
  auto seconds = std::chrono::system_clock::to_time_t(when);
  auto millis = std::chrono::duration_cast<milliseconds>(when.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", text, millis);
}

}  // namespace

std::string render_event(const probes::WatchEvent& event, const std::string& output) {
  if (output == "json") {
    return nlohmann::json{{"time", iso_millis(event.when)},
                          {"elapsed_ms", event.elapsed.count()},
                          {"event", probes::to_string(event.kind)},
                          {"session", event.session.empty() ? nlohmann::json(nullptr) : nlohmann::json(event.session)},
                          {"server", event.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(event.server)},
                          {"duration_ms", event.duration.count()},
                          {"detail", event.detail}}
               .dump() +
           "\n";
  }
  std::string who = event.session.empty() ? "" : "session " + event.session;
  if (!event.server.empty()) {
    if (!who.empty()) who += ' ';
    who += '@' + event.server;
  }
  return fmt::format("{} +{:>8} {:<18} {:<22} {}\n", iso_millis(event.when), format_duration(event.elapsed),
                     probes::to_string(event.kind), who, event.detail);
}

nlohmann::json to_json(const probes::WatchTotals& totals) {
  return {{"sessions", totals.sessions},
          {"sessions_kept", totals.sessions - totals.sessions_expired},
          {"sessions_expired", totals.sessions_expired},
          {"ephemerals_lost", totals.ephemerals_lost},
          {"session_timeout_ms", totals.negotiated_timeout.count()},
          {"writes_attempted", totals.writes_attempted},
          {"writes_acked", totals.writes_acked},
          {"writes_failed", totals.writes_failed},
          {"writes_lost", totals.writes_lost},
          {"writes_out_of_order", totals.writes_out_of_order},
          {"read_checks", totals.read_checks},
          {"stale_reads", totals.stale_reads},
          {"longest_unavailable_ms", totals.longest_unavailable.count()},
          {"longest_disconnect_ms", totals.longest_disconnect.count()}};
}

std::string render_watch_summary(const probes::WatchTotals& totals, const std::vector<Finding>& findings,
                                 const std::string& output) {
  if (output == "json") {
    auto json = to_json(totals);
    json["event"] = "summary";
    json["verdict"] = findings.empty() ? "ok" : "failed";
    json["findings"] = nlohmann::json::array();
    for (const auto& f : findings) json["findings"].push_back({{"severity", to_string(f.severity)}, {"code", f.code}, {"message", f.message}});
    return json.dump() + "\n";
  }
  std::string text = fmt::format(
      "summary: sessions {} kept, {} expired; writes {} acknowledged, {} lost, {} failed; longest write-unavailability "
      "{}; longest disconnect {} (session timeout {})\n",
      totals.sessions - totals.sessions_expired, totals.sessions_expired, totals.writes_acked, totals.writes_lost,
      totals.writes_failed, format_duration(totals.longest_unavailable), format_duration(totals.longest_disconnect),
      format_duration(totals.negotiated_timeout));
  for (const auto& finding : findings) text += fmt::format("  {:<8}  {:<20}  {}\n", to_string(finding.severity), finding.code, finding.message);
  return text;
}

int run_watch(const WatchOptions& options, std::ostream& out, std::ostream& err) {
  probes::WatchSettings settings;
  try {
    validate(options);
    settings = watch_settings(probes::parse_server_list(options.servers), options.namespace_path, options.tuning);
  } catch (const std::invalid_argument& error) {
    err << "zkverify watch: " << error.what() << "\n";
    return kExitUsage;
  }

  std::mutex out_mutex;
  probes::WatchEngine engine(settings, [&](const probes::WatchEvent& event) {
    std::lock_guard lock(out_mutex);
    out << render_event(event, options.output) << std::flush;
  });
  install_stop_signals();
  if (auto error = engine.start(probes::Clock::now() + options.timeout)) {
    err << "zkverify watch: cannot start: " << *error << "\n";
    return 2;
  }
  auto end = options.duration ? std::optional(probes::Clock::now() + *options.duration) : std::nullopt;
  while (!g_stop_requested && (!end || probes::Clock::now() < *end)) std::this_thread::sleep_for(milliseconds(50));
  engine.stop();
  auto totals = engine.totals();
  auto findings = judge_watch(totals, options.tuning.max_unavailable);
  std::lock_guard lock(out_mutex);
  out << render_watch_summary(totals, findings, options.output) << std::flush;
  return findings.empty() ? 0 : 2;
}

}  // namespace zkverify::verifier
