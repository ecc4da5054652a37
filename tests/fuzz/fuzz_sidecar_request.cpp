// What the sidecar parses of an HTTP request beyond Beast: the method and target (route: path and
// query), and --listen (parse_listen). Input: the method, a space, the target; the last line is also
// a --listen value. Every route answers with a known status, whatever the target.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "fuzz_check.hpp"
#include "model/render/sidecar_pages.hpp"

using namespace zkverify;

namespace {

void check_route(std::string_view method, std::string_view target) {
  auto page = route(method, target);
  if (method != "GET" && method != "HEAD") FUZZ_CHECK(page.page == Page::method_not_allowed);
  auto path = target.substr(0, target.find('?'));
  if (page.page == Page::livez) FUZZ_CHECK(path == "/livez");
  if (page.page == Page::readyz) FUZZ_CHECK(path == "/readyz");
  if (page.page == Page::ensemble) FUZZ_CHECK(path == "/ensemble");
  if (page.page == Page::metrics) FUZZ_CHECK(path == "/metrics");
  if (page.page == Page::status) FUZZ_CHECK(path == "/");
  if (page.verbose) FUZZ_CHECK(target.find('?') != std::string_view::npos);
  PageContext context;
  auto response = respond(page, SidecarStatus{}, context);
  FUZZ_CHECK(response.status == 200 || response.status == 404 || response.status == 405 || response.status == 503);
  FUZZ_CHECK(!response.content_type.empty());
}

void check_listen(std::string_view text) {
  ListenAddress listen;
  try {
    listen = parse_listen(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  auto written = listen.host.find(':') == std::string::npos ? fmt::format("{}:{}", listen.host, listen.port)
                                                            : fmt::format("[{}]:{}", listen.host, listen.port);
  auto again = parse_listen(written);
  FUZZ_CHECK(again.host == listen.host && again.port == listen.port);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = fuzz::text_of(data, size);
  auto space = input.find(' ');
  if (space != std::string_view::npos) check_route(input.substr(0, space), input.substr(space + 1));
  else check_route("GET", input);
  check_listen(input.substr(input.rfind('\n') == std::string_view::npos ? 0 : input.rfind('\n') + 1));
  return 0;
}
