#include "model/render/watch_view.hpp"

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/render/json_text.hpp"

namespace zkverify {

std::string render_event(const WatchEvent& event, OutputFormat output) {
  if (output == OutputFormat::json) {
    nlohmann::json json{{"time", iso8601(event.when, true)},
                        {"elapsed_ms", event.elapsed.count()},
                        {"event", to_string(event.kind)},
                        {"session", event.session.empty() ? nlohmann::json(nullptr) : nlohmann::json(event.session)},
                        {"server", event.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(event.server)},
                        {"duration_ms", event.duration.count()},
                        {"detail", event.detail}};
    return json_text(json, -1) + "\n";
  }
  std::string who = event.session.empty() ? "" : "session " + event.session;
  if (!event.server.empty()) {
    if (!who.empty()) who += ' ';
    who += '@' + event.server;
  }
  return fmt::format("{} +{:>8} {:<18} {:<22} {}\n", iso8601(event.when, true), format_duration(event.elapsed),
                     to_string(event.kind), who, event.detail);
}

nlohmann::json to_json(const WatchTotals& totals) {
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

std::string render_watch_summary(const WatchTotals& totals, const std::vector<Finding>& findings, OutputFormat output) {
  if (output == OutputFormat::json) {
    auto json = to_json(totals);
    json["event"] = "summary";
    json["verdict"] = findings.empty() ? "ok" : "failed";
    json["findings"] = nlohmann::json::array();
    for (const auto& f : findings)
      json["findings"].push_back(
          {{"severity", to_string(f.severity)}, {"code", to_string(f.code)}, {"message", f.message}});
    return json_text(json, -1) + "\n";
  }
  std::string text = fmt::format(
      "summary: sessions {} kept, {} expired; writes {} acknowledged, {} lost, {} failed; longest write-unavailability "
      "{}; longest disconnect {} (session timeout {})\n",
      totals.sessions - totals.sessions_expired, totals.sessions_expired, totals.writes_acked, totals.writes_lost,
      totals.writes_failed, format_duration(totals.longest_unavailable), format_duration(totals.longest_disconnect),
      format_duration(totals.negotiated_timeout));
  for (const auto& finding : findings)
    text += fmt::format("  {:<8}  {:<20}  {}\n", to_string(finding.severity), to_string(finding.code), finding.message);
  return text;
}

}  // namespace zkverify
