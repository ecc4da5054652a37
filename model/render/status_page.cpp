#include "model/render/status_page.hpp"

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/render/report_view.hpp"

namespace zkverify {

std::string render_readyz(const Readiness* readiness, bool verbose, bool fresh) {
  if (readiness == nullptr)
    return verbose ? "[-]cycle failed: no cycle has ended yet\nreadyz check failed\n"
                   : "not ready: no cycle has ended yet\n";
  constexpr std::string_view stale = "the last cycle ended more than 3 intervals + timeout ago";
  bool ready = readiness->ready && fresh;
  if (!verbose) {
    if (ready) return "ok\n";
    return fmt::format("not ready: {}\n", fresh ? first_failure(*readiness) : "cycle: " + std::string(stale));
  }
  std::string body;
  if (!fresh) body += fmt::format("[-]cycle failed: {}\n", stale);
  for (const auto& check : readiness->checks)
    body += check.passed ? fmt::format("[+]{} ok\n", check.name)
                         : fmt::format("[-]{} failed: {}\n", check.name, check.reason);
  body += fmt::format("sync proof: {}\n", to_string(readiness->proof));
  body += ready ? "readyz check passed\n" : "readyz check failed\n";
  return body;
}

namespace {

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}pre{background:#f4f4f4;padding:1em;overflow-x:auto}"
    ".ready{color:#176117}.unready{color:#a11}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}";

std::string readiness_section(const SidecarStatus& status, std::chrono::system_clock::time_point now) {
  if (!status.last)
    return fmt::format("<p class=\"unready\">{}: no cycle has ended yet</p>\n", html_escaped(status.local));
  const auto& last = *status.last;
  auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - last.checked_at);
  std::string html =
      fmt::format("<p class=\"{}\" id=\"readiness\">{}: {}</p>\n", last.readiness.ready ? "ready" : "unready",
                  html_escaped(status.local), last.readiness.ready ? "ready" : "not ready");
  html += "<ul>\n";
  for (const auto& check : last.readiness.checks)
    html += fmt::format("<li>{} {}{}</li>\n", check.passed ? "[+]" : "[-]", html_escaped(check.name),
                        check.passed ? " ok" : " failed: " + html_escaped(check.reason));
  html += fmt::format("</ul>\n<p>sync proof: {}. Checked at {} ({} ago), cycle {}.</p>\n",
                      html_escaped(to_string(last.readiness.proof)), iso8601(last.checked_at),
                      format_duration(std::max(age, std::chrono::milliseconds(0))), status.cycles);
  return html;
}

std::string findings_section(const Report& report) {
  if (report.findings.empty()) return "<h2>Findings</h2>\n<p>none</p>\n";
  std::string html =
      "<h2>Findings</h2>\n<table>\n<tr><th>severity</th><th>code</th><th>server</th><th>message</th></tr>\n";
  for (const auto& finding : report.findings)
    html +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", to_string(finding.severity),
                    html_escaped(to_string(finding.code)), html_escaped(finding.server), html_escaped(finding.message));
  return html + "</table>\n";
}

}  // namespace

std::string render_status_page(const SidecarStatus& status, std::chrono::system_clock::time_point now) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>zkverify: {}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>zkverify serve: {}</h1>\n",
      html_escaped(status.local), kStyle, html_escaped(status.local));
  html += readiness_section(status, now);
  if (status.last) {
    // The table exactly as `zkverify quorum` prints it, so people read one format everywhere.
    html += "<h2>Ensemble</h2>\n<pre id=\"ensemble\">" + html_escaped(render_text(status.last->report)) + "</pre>\n";
    html += findings_section(status.last->report);
  }
  html += fmt::format(
      "<p><a href=\"/metrics\">metrics</a> · <a href=\"/ensemble\">ensemble JSON</a> · "
      "<a href=\"/readyz?verbose\">readyz</a> · zkverify {}</p>\n</body>\n</html>\n",
      ZKVERIFY_VERSION);
  return html;
}

}  // namespace zkverify
