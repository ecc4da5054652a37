// The sidecar's HTTP server against clients on loopback: pages by route, HEAD, 404/405, and the
// limits that keep it answering whatever clients do (slow and idle clients dropped, a cap on
// connections at which the oldest goes, a request head of at most 8 KiB).

#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "sidecar_http_client.hpp"
#include "test_executor.hpp"
#include "verifier/sidecar/http_server.hpp"

using namespace zkverify;
using namespace zkverify::verifier;
using Catch::Matchers::Contains;

namespace {

// A server on 127.0.0.1:0 whose pages say which route they answer.
HttpServer::Handler echo_route(std::atomic<int>* calls = nullptr) {
  return [calls](const Route& r) {
    if (calls) ++*calls;
    if (r.page == Page::not_found) return Response{404, "text/plain", "not found\n"};
    if (r.page == Page::method_not_allowed) return Response{405, "text/plain", "no\n"};
    return Response{r.page == Page::readyz ? 503 : 200, "text/plain", r.verbose ? "verbose\n" : "page\n"};
  };
}

ListenAddress any_loopback_port() { return {"127.0.0.1", 0}; }

// Closed (end of stream), or reset: a connection still in the listen backlog when the listener
// closes is reset by the kernel, never accepted. Not closed: the read timed out.
bool closed_by_server(int fd) {
  std::string ignored;
  bool timed_out = false;
  if (sidecar_client::read_to_close(fd, ignored, timed_out)) return true;
  return !timed_out && errno == ECONNRESET;
}

}  // namespace

TEST_CASE("http server: routes, HEAD without a body, 404 and 405 with Allow", "[sidecar]") {
  HttpServer server(test_executor(), any_loopback_port(), echo_route());
  auto readyz = sidecar_client::get(server.port(), "/readyz?verbose");
  CHECK(readyz.status == 503);
  CHECK(readyz.body == "verbose\n");
  auto head = sidecar_client::request(server.port(), "HEAD", "/livez");
  CHECK(head.status == 200);
  CHECK_THAT(head.head, Contains("Content-Length: 5"));
  CHECK(head.body.empty());
  CHECK(sidecar_client::get(server.port(), "/nope").status == 404);
  auto post = sidecar_client::request(server.port(), "POST", "/readyz");
  CHECK(post.status == 405);
  CHECK_THAT(post.head, Contains("Allow: GET, HEAD"));
}

TEST_CASE("http server: keep-alive serves several requests on one connection", "[sidecar]") {
  HttpServer server(test_executor(), any_loopback_port(), echo_route());
  auto reply = sidecar_client::raw_request(server.port(),
                                           "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
                                           "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(reply.status == 200);
  CHECK_THAT(reply.body, Contains("HTTP/1.1 503"));  // the second response follows the first
}

TEST_CASE("http server: a request head over 8 KiB is refused", "[sidecar]") {
  std::atomic<int> calls{0};
  HttpServer server(test_executor(), any_loopback_port(), echo_route(&calls));
  auto big = "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(9000, 'a') + "\r\n\r\n";
  auto reply = sidecar_client::raw_request(server.port(), big);
  CHECK(reply.status == 431);  // read before the connection closes: the rest of the head is drained
  CHECK(calls == 0);           // never routed
  auto fits =
      "GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Padding: " + std::string(7000, 'a') + "\r\n\r\n";
  CHECK(sidecar_client::raw_request(server.port(), fits).status == 200);
}

TEST_CASE("http server: an idle or slow client is dropped after the idle limit", "[sidecar]") {
  HttpLimits limits;
  limits.idle = std::chrono::milliseconds(300);
  HttpServer server(test_executor(), any_loopback_port(), echo_route(), limits);
  SECTION("idle: connects and sends nothing") {
    int fd = sidecar_client::connect_to(server.port(), std::chrono::seconds(10));
    REQUIRE(fd >= 0);
    CHECK(closed_by_server(fd));
    ::close(fd);
  }
  SECTION("slow: drips a request that never ends") {
    int fd = sidecar_client::connect_to(server.port(), std::chrono::seconds(10));
    REQUIRE(fd >= 0);
    std::atomic<bool> done{false};
    std::thread drip([&] {
      for (char c : std::string("GET /livez HTTP/1.1\r\nX-Slow: ") + std::string(200, 'a')) {
        if (done || !sidecar_client::send_all(fd, std::string(1, c))) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    CHECK(closed_by_server(fd));
    done = true;
    drip.join();
    ::close(fd);
  }
  CHECK(sidecar_client::get(server.port(), "/livez").status == 200);
}

TEST_CASE("http server: 300 idle connections do not keep /readyz from answering", "[sidecar]") {
  HttpServer server(test_executor(), any_loopback_port(), echo_route());
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = sidecar_client::connect_to(server.port());
    REQUIRE(fd >= 0);
    idle.push_back(fd);
  }
  auto started = std::chrono::steady_clock::now();
  auto reply = sidecar_client::get(server.port(), "/readyz");
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  INFO("answered in " << took.count() << " ms (the benchmark's business, not asserted here)");
  CHECK(reply.status == 503);
  CHECK(reply.body == "page\n");
  CHECK(server.connections() <= HttpLimits{}.max_connections);
  CHECK(HttpLimits{}.max_connections == 64);  // README's promise
  for (int fd : idle) ::close(fd);
}

TEST_CASE("http server: stop closes every connection and the listener", "[sidecar]") {
  auto server = std::make_unique<HttpServer>(test_executor(), any_loopback_port(), echo_route());
  auto port = server->port();
  int fd = sidecar_client::connect_to(port);
  REQUIRE(fd >= 0);
  server->stop();
  CHECK(closed_by_server(fd));
  ::close(fd);
  CHECK(sidecar_client::connect_to(port, std::chrono::seconds(1)) == -1);
  server.reset();
}

TEST_CASE("http server: an address it cannot listen on is an error naming it", "[sidecar]") {
  HttpServer first(test_executor(), any_loopback_port(), echo_route());
  ListenAddress taken{"127.0.0.1", first.port()};
  CHECK_THROWS_WITH(HttpServer(test_executor(), taken, echo_route()),
                    Contains("cannot listen on 127.0.0.1:" + std::to_string(first.port())));
  CHECK_THROWS_WITH(HttpServer(test_executor(), ListenAddress{"localhost-ish", 0}, echo_route()),
                    Contains("not an IP address"));
}

TEST_CASE("http server: the default limits are the issue's (8 KiB head, 5 s idle, a bounded number of connections)",
          "[sidecar]") {
  HttpLimits limits;
  CHECK(limits.max_head == 8 * 1024);
  CHECK(limits.idle == std::chrono::seconds(5));
  CHECK(limits.max_connections < 300);  // so 300 idle connections reach the cap and the oldest are dropped
}
