#pragma once
// A TCP socket bound to 127.0.0.1 on a port the kernel picks (port 0), for tests' fake servers.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

#include <catch2/catch.hpp>

namespace loopback {

// A socket bound to 127.0.0.1:0, listening when `listening` (else every connection is refused);
// its port in `port`.
inline int bound_socket(bool listening, std::uint16_t& port) {
  int socket = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(socket >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(socket, reinterpret_cast<sockaddr*>(&address), length) == 0);
  if (listening) REQUIRE(::listen(socket, 8) == 0);
  REQUIRE(::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  port = ntohs(address.sin_port);
  return socket;
}

// A loopback port that refuses every connection: bound, never listening.
class RefusingPort {
 public:
  RefusingPort() : socket_(bound_socket(false, port_)) {}
  ~RefusingPort() { ::close(socket_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  std::uint16_t port_ = 0;
  int socket_;
};

// A loopback port nothing listens on: bound, then closed, so connections to it are refused (until
// the kernel gives it to another socket: RefusingPort holds it).
inline std::uint16_t closed_port() {
  std::uint16_t port = 0;
  ::close(bound_socket(false, port));
  return port;
}

}  // namespace loopback
