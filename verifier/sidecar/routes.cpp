#include "verifier/sidecar/routes.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "verifier/render/json_text.hpp"
#include "verifier/render/metrics.hpp"
#include "verifier/render/report_view.hpp"
#include "verifier/render/status_page.hpp"
#include "verifier/render/time_text.hpp"

namespace zkverify::verifier {

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
    case Page::not_found: return {404, "text/plain; charset=utf-8", "not found: try /, /livez, /readyz, /ensemble, /metrics\n"};
    case Page::method_not_allowed: return {405, "text/plain; charset=utf-8", "method not allowed: GET or HEAD\n"};
  }
  return {500, "text/plain; charset=utf-8", "internal error\n"};
}

bool is_alive(std::chrono::steady_clock::time_point last_cycle_end, std::chrono::steady_clock::time_point now,
              std::chrono::milliseconds interval, std::chrono::milliseconds timeout) {
  return now - last_cycle_end <= 3 * interval + timeout;
}

ListenAddress parse_listen(std::string_view text) {
  auto fail = [&](std::string_view why) {
    throw std::invalid_argument(fmt::format("--listen '{}': {} (expected HOST:PORT, e.g. 0.0.0.0:9181 or [::]:9181)", text, why));
  };
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) fail("no host and port");
  auto host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') fail("an IPv6 host needs its closing bracket");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    fail("an IPv6 host goes in brackets");
  }
  if (host.find_first_of("[]") != std::string_view::npos) fail("a '[' or ']' inside the host");
  auto port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    fail("the port must be a number from 0 to 65535");
  return {std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace zkverify::verifier
