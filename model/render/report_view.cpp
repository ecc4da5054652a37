#include "model/render/report_view.hpp"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/time_text.hpp"
#include "model/judge/client_changes.hpp"
#include "model/render/json_text.hpp"
#include "model/render/utf8_text.hpp"

namespace zkverify {

namespace {

std::string or_dash(const std::optional<int>& value) { return value ? std::to_string(*value) : "-"; }

std::string headline(const Report& report) {
  std::string text = fmt::format("{}: ", to_string(report.verdict));
  text += report.leader ? fmt::format("leader {}", *report.leader) : std::string("no single leader");
  text += fmt::format(", {}/{} voters serving", report.serving_voters, report.expected_voters);
  if (report.voters_uncertain) text += " (an estimate of the voters: the committed write proves a quorum)";
  // A count of nothing ("read back on 0/0") says nothing: a trip that read nowhere says how far it got.
  if (const auto& trip = report.round_trip; trip && trip->reads_attempted > 0)
    text += fmt::format(", round trip via {} read back on {}/{}", trip->writer, trip->reads_ok, trip->reads_attempted);
  else if (trip && trip->refused) text += fmt::format(", round trip via {}: refused", trip->writer);
  else if (trip)
    text += fmt::format(", round trip via {}: {}", trip->writer,
                        trip->write_zxid ? "read back nowhere" : "the write was not committed");
  return text;
}

// The phases in the order they run, by the names JSON and the text line give them.
std::vector<std::pair<const char*, std::chrono::microseconds>> phases(const PhaseTimings& timings) {
  return {{"probe", timings.probe},         {"connect", timings.connect}, {"write", timings.write},
          {"read_back", timings.read_back}, {"cleanup", timings.cleanup}, {"total", timings.total}};
}

std::int64_t whole_ms(std::chrono::microseconds time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time).count();
}

// "1 (session 0x...)" for a registration under the path, "held by session 0x..." for the path's own node.
std::string registration_text(const ClientPathRead& read, const Registration& held) {
  if (held.path == read.path) {
    auto broker = controller_broker(held.data);
    return fmt::format("held by session {}{}", session_text(held.owner),
                       broker ? fmt::format(" (broker {})", *broker) : "");
  }
  return fmt::format("{} (session {})", held.path.substr(read.path.size() + 1), session_text(held.owner));
}

std::string client_line(const ClientPathRead& read) {
  if (read.error == ZkError::no_node) return fmt::format("  {}: not there\n", read.path);
  if (read.error != ZkError::ok) return fmt::format("  {}: not read ({})\n", read.path, to_string(read.error));
  std::vector<std::string> held;
  for (const auto& registration : read.held) held.push_back(registration_text(read, registration));
  if (held.empty())  // a counter such as /controller_epoch says its value
    return fmt::format("  {}: no registrations{}\n", read.path,
                       read.data.empty() || read.data.size() > 32 ? "" : fmt::format(" (data: {})", read.data));
  return fmt::format("  {}: {}\n", read.path, fmt::join(held, ", "));
}

}  // namespace

std::string render_timings_text(const PhaseTimings& timings) {
  std::string text = "timings:";
  for (const auto& [name, time] : phases(timings)) text += fmt::format(" {} {}ms,", name, whole_ms(time));
  text.back() = '\n';
  return text;
}

nlohmann::json timings_json(const PhaseTimings& timings) {
  auto object = nlohmann::json::object();
  for (const auto& [name, time] : phases(timings)) object[name] = whole_ms(time);
  return object;
}

std::string render_text(const Report& report) {
  struct Cells {
    std::string name, id, mode, zxid, epoch, latency, note;
  };
  std::vector<Cells> rows{{"NAME", "ID", "MODE", "ZXID", "EPOCH", "LATENCY", "NOTE"}};
  for (const auto& server : report.servers) {
    rows.push_back(
        {server.name, or_dash(server.id), std::string(to_string(server.state)),
         server.zxid ? zxid_hex(*server.zxid) : "-", server.zxid ? std::to_string(server.zxid->epoch()) : "-",
         server.latency_ms ? fmt::format("{:.1f}ms", *server.latency_ms) : "-",
         server.error.empty() || server.note.empty() ? server.error + server.note : server.error + "; " + server.note});
  }
  std::size_t widths[6] = {};
  for (const auto& row : rows) {
    const std::string* cells[6] = {&row.name, &row.id, &row.mode, &row.zxid, &row.epoch, &row.latency};
    for (int i = 0; i < 6; ++i) widths[i] = std::max(widths[i], cells[i]->size());
  }
  std::string out = headline(report) + "\n\n";
  for (const auto& row : rows) {
    auto line =
        fmt::format("{:<{}}  {:>{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {}", row.name, widths[0], row.id, widths[1],
                    row.mode, widths[2], row.zxid, widths[3], row.epoch, widths[4], row.latency, widths[5], row.note);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (report.membership_views.size() > 1) {  // one list needs no words; more are a change under way
    out += "\nmembership lists:\n";
    for (const auto& view : report.membership_views)
      out += fmt::format("  {}: {} voters (ids {}){}, held by {}{}\n",
                         view.version ? fmt::format("version {:x}", *view.version) : std::string("no version"),
                         view.voters.size(), fmt::join(view.voters, ", "),
                         view.observers.empty() ? "" : fmt::format(", observers {}", fmt::join(view.observers, ", ")),
                         fmt::join(view.holders, ", "),
                         view.given.empty() ? "" : fmt::format(" ({}: by --zoo-cfg)", fmt::join(view.given, ", ")));
  }
  if (report.clients) {
    out += "\nclients:\n";
    for (const auto& read : *report.clients) out += client_line(read);
  }
  if (!report.findings.empty()) {
    out += "\nfindings:\n";
    for (const auto& finding : report.findings)
      out +=
          fmt::format("  {:<8}  {:<20}  {}\n", to_string(finding.severity), to_string(finding.code), finding.message);
  }
  return valid_utf8(out);  // servers' bytes are quoted in it
}

namespace {

nlohmann::json certificate_json(const std::optional<CertificateFacts>& certificate, long long days) {
  if (!certificate) return nullptr;
  return {{"subject", certificate->subject},
          {"issuer", certificate->issuer},
          {"not_after", iso8601(certificate->not_after)},
          {"days_left", days},
          {"names", certificate->names}};
}

nlohmann::json clients_json(const std::vector<ClientPathRead>& reads) {
  auto out = nlohmann::json::array();
  for (const auto& read : reads) {
    auto held = nlohmann::json::array();
    for (const auto& registration : read.held)
      held.push_back(
          {{"path", registration.path},
           {"owner", session_text(registration.owner)},
           {"ctime",
            iso8601(std::chrono::system_clock::time_point(std::chrono::milliseconds(registration.ctime_ms)), true)}});
    bool read_ok = read.error == ZkError::ok || read.error == ZkError::no_node;
    out.push_back({{"path", read.path},
                   {"exists", read.error == ZkError::ok},
                   {"error", read_ok ? nlohmann::json(nullptr) : nlohmann::json(to_string(read.error))},
                   {"data", valid_utf8(read.data)},
                   {"held", std::move(held)}});
  }
  return out;
}

nlohmann::json views_json(const std::vector<ViewSummary>& views) {
  auto out = nlohmann::json::array();
  for (const auto& view : views)
    out.push_back({{"version", view.version ? nlohmann::json(fmt::format("{:x}", *view.version)) : nullptr},
                   {"voters", view.voters},
                   {"observers", view.observers},
                   {"holders", view.holders},
                   {"given", view.given}});
  return out;
}

}  // namespace

nlohmann::json to_json(const Report& report) {
  using nlohmann::json;
  json servers = json::array();
  for (const auto& server : report.servers) {
    servers.push_back({
        {"name", server.name},
        {"address", server.address},
        {"id", server.id ? json(*server.id) : json(nullptr)},
        {"mode", to_string(server.state)},
        {"zxid", server.zxid ? json(zxid_hex(*server.zxid)) : json(nullptr)},
        {"epoch", server.zxid ? json(server.zxid->epoch()) : json(nullptr)},
        {"latency_ms", server.latency_ms ? json(*server.latency_ms) : json(nullptr)},
        {"node_count", server.node_count ? json(*server.node_count) : json(nullptr)},
        {"connections", server.connections ? json(*server.connections) : json(nullptr)},
        {"ephemerals", server.ephemerals ? json(*server.ephemerals) : json(nullptr)},
        {"version", server.version.empty() ? json(nullptr) : json(server.version)},
        {"error", server.error.empty() ? json(nullptr) : json(server.error)},
        {"note", server.note.empty() ? json(nullptr) : json(server.note)},
        {"tls", certificate_json(server.certificate, server.certificate_days_left)},
    });
  }
  json findings = json::array();
  for (const auto& finding : report.findings) {
    findings.push_back({
        {"severity", to_string(finding.severity)},
        {"code", to_string(finding.code)},
        {"server", finding.server.empty() ? json(nullptr) : json(finding.server)},
        {"message", finding.message},
    });
  }
  json round_trip = nullptr;
  if (report.round_trip) {
    const auto& trip = *report.round_trip;
    round_trip = {
        {"writer", trip.writer},
        {"path", trip.path.empty() ? json(nullptr) : json(trip.path)},
        {"write_zxid", trip.write_zxid ? json(zxid_hex(*trip.write_zxid)) : json(nullptr)},
        {"reads_ok", trip.reads_ok},
        {"reads_attempted", trip.reads_attempted},
    };
  }
  json out = {
      {"verdict", to_string(report.verdict)},
      {"leader", report.leader ? json(*report.leader) : json(nullptr)},
      {"expected_voters", report.expected_voters},
      {"serving_voters", report.serving_voters},
      {"membership_views", views_json(report.membership_views)},
      {"servers", std::move(servers)},
      {"findings", std::move(findings)},
      {"round_trip", std::move(round_trip)},
      {"timings_ms", report.timings ? timings_json(*report.timings) : json(nullptr)},
      {"tls", report.tls
                  ? json{{"client_certificate", certificate_json(report.tls->certificate, report.tls->days_left)}}
                  : json(nullptr)},
  };
  if (report.clients) out["clients"] = clients_json(*report.clients);  // only with --clients
  return out;
}

std::string render_json(const Report& report) { return json_text(to_json(report)) + "\n"; }

}  // namespace zkverify
