#pragma once
// The sidecar's HTTP server (Boost.Beast), an actor on the executor (probes/actor.hpp). It only moves
// bytes: routing and pages are pure (routes.hpp). Limits keep it answering whatever clients do:
// a request head of at most 8 KiB (431 beyond), an idle or slow client dropped after 5 s (the
// stream's own timer closes the socket), and a cap on connections at which the oldest is dropped,
// so idle connections cannot crowd out the kubelet's /readyz.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include "probes/io.hpp"

#include "model/render/sidecar_pages.hpp"
#include "probes/executor.hpp"

namespace zkverify::verifier {

struct HttpLimits {
  std::size_t max_head = 8 * 1024;       // request line + headers, bytes
  std::chrono::milliseconds idle{5000};  // to receive a whole request, or to send a response
  std::size_t max_connections = 64;      // beyond: the oldest connection is closed
};

class HttpServer {
 public:
  // Answers a route; runs on the executor, so it must not block for long.
  using Handler = std::function<Response(const Route&)>;

  // Binds and listens on `address` (port 0: any free port) and starts serving. Throws a usage
  // error (zkverify::Error) naming the address when it is no IP address or cannot be listened on.
  HttpServer(probes::Executor& executor, const ListenAddress& address, Handler handler, HttpLimits limits = {});
  // Stops (see stop()).
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on (the one chosen when port 0 was asked).
  [[nodiscard]] std::uint16_t port() const;
  // Connections open right now.
  [[nodiscard]] std::size_t connections() const;
  // Closes the listener and every connection, and waits (5 s at most) for their coroutines to end.
  // Idempotent.
  void stop();

  struct Impl;  // the actor: acceptor and connections (public for the coroutines in the .cpp)

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace zkverify::verifier
