#include "model/render/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include <fmt/format.h>

namespace zkverify {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

// Go's ParseFloat reads what fmt's shortest form writes; the specials are spelled the Prometheus way.
std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

// The text of the families; every sample carries the ensemble's label first, when it has a name.
class Exposition {
 public:
  explicit Exposition(std::string_view ensemble)
      : ensemble_(ensemble.empty() ? "" : fmt::format("ensemble=\"{}\"", escape_label_value(ensemble))) {}
  void family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view name, double value) {
    text_ += ensemble_.empty() ? fmt::format("{} {}\n", name, number(value))
                               : fmt::format("{}{{{}}} {}\n", name, ensemble_, number(value));
  }
  void sample(std::string_view name, std::string_view label, std::string_view label_value, double value) {
    text_ += fmt::format("{}{{{}{}{}=\"{}\"}} {}\n", name, ensemble_, ensemble_.empty() ? "" : ",", label,
                         escape_label_value(label_value), number(value));
  }
  std::string take() { return std::move(text_); }

 private:
  std::string ensemble_;  // ensemble="NAME", or empty
  std::string text_;
};

double unix_seconds(std::chrono::system_clock::time_point when) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count());
}

bool anyone_answered(const Report& report) {
  return std::ranges::any_of(report.servers, [](const ServerRow& row) { return row.error.empty(); });
}

void cycle_families(Exposition& out, const SidecarStatus& status) {
  const auto* last = status.last ? &*status.last : nullptr;
  out.family("zkverify_build_info", "gauge", "zkverify's version, as a label; always 1");
  out.sample("zkverify_build_info", "version", ZKVERIFY_VERSION, 1);
  out.family("zkverify_up", "gauge", "1 when the last cycle ended and at least one server answered srvr");
  out.sample("zkverify_up", last && anyone_answered(last->report) ? 1 : 0);
  out.family("zkverify_cycles_total", "counter", "Cycles ended since the sidecar started");
  out.sample("zkverify_cycles_total", static_cast<double>(status.cycles));
  out.family("zkverify_cycle_duration_seconds", "gauge", "How long the last cycle took");
  if (last) out.sample("zkverify_cycle_duration_seconds", last->duration.count());
  out.family("zkverify_local_ready", "gauge",
             "1 when the local server serves, is on the ensemble's epoch and proved sync");
  out.sample("zkverify_local_ready", last && last->readiness.ready ? 1 : 0);
  out.family("zkverify_round_trip_seconds", "gauge", "The local session's sync and read of the cycle's write");
  if (last && last->round_trip_seconds) out.sample("zkverify_round_trip_seconds", *last->round_trip_seconds);
}

void ensemble_families(Exposition& out, const Report* report) {
  out.family("zkverify_verdict", "gauge", "1 for the last cycle's verdict, 0 for the others");
  for (auto verdict : {Verdict::healthy, Verdict::degraded, Verdict::critical})
    if (report) out.sample("zkverify_verdict", "verdict", to_string(verdict), report->verdict == verdict ? 1 : 0);
  out.family("zkverify_expected_voters", "gauge", "Voters the ensemble's configuration lists");
  if (report) out.sample("zkverify_expected_voters", report->expected_voters);
  out.family("zkverify_serving_voters", "gauge", "Voters serving (leader or follower)");
  if (report) out.sample("zkverify_serving_voters", report->serving_voters);
  out.family("zkverify_synced_followers", "gauge", "Followers proven in sync with the leader");
  if (report) {
    auto synced = std::ranges::count_if(
        report->servers, [](const ServerRow& row) { return row.state == ServerState::follower && row.synced == true; });
    out.sample("zkverify_synced_followers", static_cast<double>(synced));
  }
  out.family("zkverify_findings", "gauge", "The last cycle's findings, by severity");
  for (auto severity : {Severity::info, Severity::warning, Severity::critical}) {
    if (!report) continue;
    auto count = std::ranges::count(report->findings, severity, &Finding::severity);
    out.sample("zkverify_findings", "severity", to_string(severity), static_cast<double>(count));
  }
  if (report && report->tls && report->tls->certificate) {
    out.family("zkverify_tls_client_not_after_seconds", "gauge",
               "When zkverify's own client certificate (--tls-cert) expires (Unix time)");
    out.sample("zkverify_tls_client_not_after_seconds", unix_seconds(report->tls->certificate->not_after));
  }
}

void server_families(Exposition& out, const Report* report) {
  static const ServerRow* none = nullptr;
  auto rows = report ? std::span<const ServerRow>(report->servers) : std::span<const ServerRow>(none, 0);
  out.family("zkverify_server_up", "gauge", "1 when the server answered srvr");
  for (const auto& row : rows) out.sample("zkverify_server_up", "server", row.name, row.error.empty() ? 1 : 0);
  out.family("zkverify_server_serving", "gauge", "1 when the server serves clients (leader, follower or observer)");
  for (const auto& row : rows) out.sample("zkverify_server_serving", "server", row.name, is_serving(row.state) ? 1 : 0);
  out.family("zkverify_server_leader", "gauge", "1 when the server says it leads");
  for (const auto& row : rows)
    out.sample("zkverify_server_leader", "server", row.name, row.state == ServerState::leader ? 1 : 0);
  out.family("zkverify_server_zxid_epoch", "gauge", "The epoch (high 32 bits) of the server's last zxid");
  for (const auto& row : rows)
    if (row.zxid) out.sample("zkverify_server_zxid_epoch", "server", row.name, row.zxid->epoch());
  out.family("zkverify_server_latency_seconds", "gauge", "The srvr exchange's latency");
  for (const auto& row : rows)
    if (row.latency_ms) out.sample("zkverify_server_latency_seconds", "server", row.name, *row.latency_ms / 1000.0);
  out.family("zkverify_server_connections", "gauge",
             "The server's client connections, as srvr counts them (zkverify's own srvr connection among them)");
  for (const auto& row : rows)
    if (row.connections)
      out.sample("zkverify_server_connections", "server", row.name, static_cast<double>(*row.connections));
  out.family("zkverify_server_ephemerals", "gauge",
             "The ephemeral nodes of the whole tree as the server holds them (mntr, where whitelisted)");
  for (const auto& row : rows)
    if (row.ephemerals)
      out.sample("zkverify_server_ephemerals", "server", row.name, static_cast<double>(*row.ephemerals));
  bool tls = std::ranges::any_of(rows, [](const ServerRow& row) { return row.certificate.has_value(); });
  if (!tls) return;
  out.family("zkverify_server_tls_not_after_seconds", "gauge",
             "When the server's TLS certificate expires (Unix time), as its last handshake presented it");
  for (const auto& row : rows)
    if (row.certificate)
      out.sample("zkverify_server_tls_not_after_seconds", "server", row.name, unix_seconds(row.certificate->not_after));
}

// --clients only: what the last cycle read of each path, and what became of its registrations since
// the sidecar started.
void client_families(Exposition& out, const SidecarStatus& status) {
  if (status.clients.empty()) return;
  out.family("zkverify_client_registrations", "gauge",
             "Ephemeral registrations under a --clients path (and the path itself when ephemeral), as last read");
  for (const auto& read : status.clients_seen)
    out.sample("zkverify_client_registrations", "path", read.path, static_cast<double>(read.held.size()));
  out.family("zkverify_client_registrations_renewed_total", "counter",
             "Registrations under a --clients path found held by a new session: the one that held it ended "
             "(it expired, or the client closed it) and the client registered again");
  for (const auto& [path, tally] : status.clients)
    out.sample("zkverify_client_registrations_renewed_total", "path", path, static_cast<double>(tally.renewed));
  out.family("zkverify_client_registrations_gone_total", "counter",
             "Registrations under a --clients path not there at the next cycle (not registered again)");
  for (const auto& [path, tally] : status.clients)
    out.sample("zkverify_client_registrations_gone_total", "path", path, static_cast<double>(tally.gone));
}

}  // namespace

std::string render_metrics(const SidecarStatus& status) {
  Exposition out(status.ensemble);
  cycle_families(out, status);
  const Report* report = status.last ? &status.last->report : nullptr;
  ensemble_families(out, report);
  server_families(out, report);
  client_families(out, status);
  return out.take();
}

}  // namespace zkverify
