#include "verifier/sidecar/http_server.hpp"

#include <array>

#include <atomic>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"
#include "probes/actor.hpp"

namespace zkverify::verifier {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

// The server's actor (probes/actor.hpp): the acceptor and the open connections, touched only on its
// strand, by the accept loop and one coroutine per connection, each holding a Task.
struct HttpServer::Impl : probes::ActorCore {
  explicit Impl(probes::Executor& executor) : ActorCore(executor), acceptor(strand()) {}
  tcp::acceptor acceptor;
  Handler handler;
  HttpLimits limits;
  // Open connections by age (ids increase), so the oldest is the first to drop at the cap.
  std::map<std::uint64_t, std::shared_ptr<beast::tcp_stream>> open;
  std::uint64_t next_id = 0;
  std::atomic<std::size_t> open_count{0};  // published for connections()
  std::uint16_t port = 0;                  // set before the first coroutine starts

  void drop(std::uint64_t id) {
    auto it = open.find(id);
    if (it == open.end()) return;
    it->second->close();
    open.erase(it);
    open_count = open.size();
  }
  // Closing the acceptor and the sockets ends every coroutine at its next operation.
  void on_stop() override {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    while (!open.empty()) drop(open.begin()->first);
  }
};

namespace {

// Starts `coroutine` on the server's strand; it counts as one of the server's Tasks until it ends.
void spawn(const std::shared_ptr<HttpServer::Impl>& impl, asio::awaitable<void> coroutine) {
  asio::co_spawn(impl->strand(), std::move(coroutine), [task = impl->task()](const std::exception_ptr&) {});
}

}  // namespace

namespace {

using Impl = HttpServer::Impl;

template <class Body>
void set_common_fields(http::response<Body>& reply, const Response& response) {
  reply.set(http::field::server, "zkverify/" ZKVERIFY_VERSION);
  reply.set(http::field::content_type, response.content_type);
  reply.set(http::field::cache_control, "no-store");
  if (response.status == 405) reply.set(http::field::allow, "GET, HEAD");
}

// Writes the response (for HEAD: its head only, with the length the body would have).
asio::awaitable<void> write_response(beast::tcp_stream& stream, const Response& response, bool head, bool keep_alive,
                                     unsigned version, boost::system::error_code& error) {
  auto status = static_cast<http::status>(response.status);
  if (head) {
    http::response<http::empty_body> reply{status, version};
    set_common_fields(reply, response);
    reply.content_length(response.body.size());
    reply.keep_alive(keep_alive);
    co_await http::async_write(stream, reply, asio::redirect_error(asio::use_awaitable, error));
    co_return;
  }
  http::response<http::string_body> reply{status, version, response.body};
  set_common_fields(reply, response);
  reply.keep_alive(keep_alive);
  reply.prepare_payload();
  co_await http::async_write(stream, reply, asio::redirect_error(asio::use_awaitable, error));
}

// After refusing a request whose head is still arriving: closing at once, with its bytes unread,
// would reset the connection and could destroy the refusal before the client reads it. So the
// sending side is shut and what the client still sends is read and dropped, for a second at most.
asio::awaitable<void> close_after_refusal(beast::tcp_stream& stream) {
  boost::system::error_code error;
  stream.socket().shutdown(tcp::socket::shutdown_send, error);
  stream.expires_after(std::chrono::seconds(1));
  std::array<char, 4096> scratch{};
  while (!error)
    co_await stream.async_read_some(asio::buffer(scratch), asio::redirect_error(asio::use_awaitable, error));
}

// Requests on one connection until the client closes, errs, stalls past the idle limit, or asks to close.
asio::awaitable<void> serve_connection(std::shared_ptr<Impl> owner, std::shared_ptr<beast::tcp_stream> stream,
                                       std::uint64_t id) {
  auto& impl = *owner;
  beast::flat_buffer buffer;
  boost::system::error_code error;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(impl.limits.max_head));
    parser.body_limit(impl.limits.max_head);
    stream->expires_after(impl.limits.idle);  // the whole request, however slowly it drips
    co_await http::async_read(*stream, buffer, parser, asio::redirect_error(asio::use_awaitable, error));
    if (error == http::error::header_limit || error == http::error::body_limit) {
      Response refused{431, "text/plain; charset=utf-8", "request head larger than 8 KiB\n"};
      co_await write_response(*stream, refused, false, false, 11, error);
      if (!error) co_await close_after_refusal(*stream);
      break;
    }
    if (error) break;
    const auto& request = parser.get();
    auto response = impl.handler(route(request.method_string(), request.target()));
    bool keep_alive = request.keep_alive();
    stream->expires_after(impl.limits.idle);
    co_await write_response(*stream, response, request.method() == http::verb::head, keep_alive, request.version(),
                            error);
    if (error || !keep_alive) break;
  }
  stream->socket().shutdown(tcp::socket::shutdown_send, error);
  impl.drop(id);
}

asio::awaitable<void> accept_loop(std::shared_ptr<Impl> owner) {
  auto& impl = *owner;
  for (;;) {
    boost::system::error_code error;
    tcp::socket socket = co_await impl.acceptor.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (!impl.acceptor.is_open() || error == asio::error::operation_aborted) co_return;
    if (error) continue;  // a connection that failed before it was accepted: keep listening
    if (impl.open.size() >= impl.limits.max_connections) impl.drop(impl.open.begin()->first);
    auto id = impl.next_id++;
    auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
    impl.open.emplace(id, stream);
    impl.open_count = impl.open.size();
    spawn(owner, serve_connection(owner, stream, id));
  }
}

tcp::endpoint endpoint_of(const ListenAddress& address) {
  boost::system::error_code error;
  auto ip = asio::ip::make_address(address.host, error);
  if (error) throw_usage(fmt::format("--listen: '{}' is not an IP address", address.host));
  return {ip, address.port};
}

// Binds and listens on `address`; an empty host (":9181", as Prometheus exporters take it) is every
// address: IPv6 and IPv4 on one dual-stack socket, or IPv4 alone where the host has no IPv6.
void listen_on(tcp::acceptor& acceptor, const ListenAddress& address) {
  auto listen = [&](const tcp::endpoint& endpoint, bool dual_stack) {
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    if (dual_stack) acceptor.set_option(asio::ip::v6_only(false));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
  };
  try {
    if (!address.host.empty()) return listen(endpoint_of(address), false);
    try {
      return listen({tcp::v6(), address.port}, true);
    } catch (const boost::system::system_error&) {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      return listen({tcp::v4(), address.port}, false);
    }
  } catch (const boost::system::system_error& e) {
    // The address the user chose is taken or not ours: nothing was checked, a usage error (64).
    throw_usage(fmt::format("--listen: cannot listen on {}:{}: {}", address.host, address.port, e.code().message()));
  }
}

}  // namespace

HttpServer::HttpServer(probes::Executor& executor, const ListenAddress& address, Handler handler, HttpLimits limits)
    : impl_(std::make_shared<Impl>(executor)) {
  impl_->handler = std::move(handler);
  impl_->limits = limits;
  listen_on(impl_->acceptor, address);
  impl_->port = impl_->acceptor.local_endpoint().port();
  spawn(impl_, accept_loop(impl_));
}

HttpServer::~HttpServer() { stop(); }

std::uint16_t HttpServer::port() const { return impl_->port; }

std::size_t HttpServer::connections() const { return impl_->open_count; }

// Were a coroutine still running after 5 s (none should: each socket is closed), it would go on
// with the Impl it owns, not one freed under it.
void HttpServer::stop() { impl_->stop_and_wait(Clock::now() + std::chrono::seconds(5)); }

}  // namespace zkverify::verifier
