#include "model/render/sidecar_pages.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "model/facts/time_text.hpp"
#include "model/render/json_text.hpp"
#include "model/render/metrics.hpp"
#include "model/render/report_view.hpp"
#include "model/render/status_page.hpp"

namespace zkverify {

namespace {

// "verbose", "verbose=1", "a=b&verbose": the key is there.
bool has_query_key(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto end = query.find('&');
    auto item = query.substr(0, end);
    if (item.substr(0, item.find('=')) == key) return true;
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return false;
}

Page page_of(std::string_view path) {
  if (path == "/livez") return Page::livez;
  if (path == "/readyz") return Page::readyz;
  if (path == "/ensemble") return Page::ensemble;
  if (path == "/metrics") return Page::metrics;
  if (path == "/") return Page::status;
  return Page::not_found;
}

Response ensemble_json(const SidecarStatus& status, const PageContext& context) {
  if (!status.last) return {503, "application/json", "{\"error\": \"no cycle has ended yet\"}\n"};
  auto json = to_json(status.last->report);
  json["checked_at"] = iso8601(status.last->checked_at, true);
  json["age_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(context.now - status.last->checked_at).count();
  return {200, "application/json", json_text(json) + "\n"};
}

}  // namespace

Route route(std::string_view method, std::string_view target) {
  Route result;
  result.head = method == "HEAD";
  if (method != "GET" && method != "HEAD") {
    result.page = Page::method_not_allowed;
    return result;
  }
  auto question = target.find('?');
  result.page = page_of(target.substr(0, question));
  if (question != std::string_view::npos) result.verbose = has_query_key(target.substr(question + 1), "verbose");
  return result;
}

Response respond(const Route& route, const SidecarStatus& status, const PageContext& context) {
  const auto* readiness = status.last ? &status.last->readiness : nullptr;
  switch (route.page) {
    case Page::livez:
      return {context.alive ? 200 : 503, "text/plain; charset=utf-8",
              context.alive ? "ok\n" : "the cycle loop has not ended a cycle for 3 intervals + timeout\n"};
    case Page::readyz:
      // A cycle loop that stopped ending cycles proves nothing about now: not ready either.
      return {readiness && readiness->ready && context.alive ? 200 : 503, "text/plain; charset=utf-8",
              render_readyz(readiness, route.verbose, context.alive)};
    case Page::ensemble: return ensemble_json(status, context);
    case Page::metrics: return {200, std::string(kMetricsContentType), render_metrics(status)};
    case Page::status: return {200, "text/html; charset=utf-8", render_status_page(status, context.now)};
    case Page::not_found:
      return {404, "text/plain; charset=utf-8", "not found: try /, /livez, /readyz, /ensemble, /metrics\n"};
    case Page::method_not_allowed: return {405, "text/plain; charset=utf-8", "method not allowed: GET or HEAD\n"};
  }
  return {500, "text/plain; charset=utf-8", "internal error\n"};
}

}  // namespace zkverify
