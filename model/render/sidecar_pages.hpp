#pragma once
// The sidecar's HTTP side without sockets: which page a request asks for, and that page's response
// from the sidecar's status. The server (http_server) only moves bytes.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/judge/sidecar_status.hpp"

namespace zkverify {

enum class Page { livez, readyz, ensemble, metrics, status, not_found, method_not_allowed };

struct Route {
  Page page = Page::not_found;
  bool verbose = false;  // ?verbose on /readyz
  bool head = false;     // HEAD: the same status and headers, no body
};

// GET or HEAD on /livez, /readyz[?verbose], /ensemble, /metrics, /; any other path is not_found and
// any other method method_not_allowed.
Route route(std::string_view method, std::string_view target);

struct Response {
  int status = 200;
  std::string content_type;
  std::string body;
};

// What the pages need besides the status: the times, as arguments (no clock here).
struct PageContext {
  bool alive = false;                           // the cycle loop ended a cycle recently (is_alive)
  std::chrono::system_clock::time_point now{};  // for ages
};

// The response to `route`: 200/503 for livez and readyz (ready only while alive too), 404, 405.
Response respond(const Route& route, const SidecarStatus& status, const PageContext& context);

}  // namespace zkverify
