#pragma once
// A blocking HTTP/1.1 client on loopback for the sidecar's tests: plain sockets, every read and
// connect bounded by a timeout, so a test never hangs on the server it is testing.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace sidecar_client {

struct Reply {
  int status = 0;    // 0: no status line came back (refused, closed, timed out)
  std::string head;  // status line and headers
  std::string body;
  bool timed_out = false;
};

// A connected socket to 127.0.0.1:port with receive and send timeouts; -1 when it cannot connect.
inline int connect_to(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads until the peer closes (or the socket's timeout): true when it closed.
inline bool read_to_close(int fd, std::string& into, bool& timed_out) {
  char buffer[4096];
  for (;;) {
    auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    timed_out = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    return n == 0;
  }
}

inline Reply parse(const std::string& raw, bool timed_out) {
  Reply reply;
  reply.timed_out = timed_out;
  auto end_of_head = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end_of_head == std::string::npos) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.head = raw.substr(0, end_of_head);
  reply.body = raw.substr(end_of_head + 4);
  return reply;
}

// Sends `request` as it is and reads the reply until the server closes.
inline Reply raw_request(std::uint16_t port, const std::string& request,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  int fd = connect_to(port, timeout);
  if (fd < 0) return {};
  std::string raw;
  bool timed_out = false;
  if (send_all(fd, request)) read_to_close(fd, raw, timed_out);
  ::close(fd);
  return parse(raw, timed_out);
}

inline Reply request(std::uint16_t port, const std::string& method, const std::string& target,
                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  return raw_request(port, method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                     timeout);
}

inline Reply get(std::uint16_t port, const std::string& target,
                 std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  return request(port, "GET", target, timeout);
}

}  // namespace sidecar_client
