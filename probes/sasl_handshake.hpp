#pragma once
// The relay's SASL exchange for one connection it carries, as a machine without I/O (the shape of
// Boost.Redis's): the driver (probes/relay.cpp) feeds it the bytes each side sends and writes what
// it hands out. The C client's connect request goes to the server; the server's connect response
// is held while the machine authenticates the connection (op 102 requests, each answered by the
// server's challenge); then the response goes to the C client, which never sees the exchange. The
// server checks SASL per connection, so every connection (each failover) makes its own.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "model/parse/zk_wire.hpp"
#include "probes/sasl_client.hpp"

namespace zkverify::probes {

class SaslHandshake {
 public:
  enum class Need {
    client_bytes,  // read from the C client and pass to from_client()
    server_bytes,  // read from the server and pass to from_server()
    done,          // authenticated (or nothing to authenticate): carry both ways from now on
    failed,        // end the connection; failure() says why, refused_by_server() who
  };
  explicit SaslHandshake(SaslMechanism& mechanism) : mechanism_(mechanism) {}

  void from_client(std::string_view bytes);
  void from_server(std::string_view bytes);
  // What to write now, taken (empty: nothing): to the server first, then to the C client.
  std::string take_for_server() { return std::exchange(for_server_, {}); }
  std::string take_for_client() { return std::exchange(for_client_, {}); }
  [[nodiscard]] Need need() const { return need_; }
  [[nodiscard]] const std::string& failure() const { return failure_; }
  // The server answered the exchange with an error (not this host's library, not a broken packet).
  [[nodiscard]] bool refused_by_server() const { return refused_by_server_; }

  // A mechanism that never ends is cut off after this many requests (DIGEST-MD5 takes two).
  static constexpr int kMaxRequests = 8;

 private:
  void on_connect_response(const std::string& packet);
  void on_reply(std::string_view packet);
  void send(const std::string& token);
  void succeed();
  void fail(std::string why, bool by_server);

  SaslMechanism& mechanism_;
  wire::FrameReader client_;
  wire::FrameReader server_;
  Need need_ = Need::client_bytes;
  std::string for_server_;
  std::string for_client_;
  bool response_seen_ = false;
  std::string held_;  // the server's connect response, framed, until it is passed on
  bool mechanism_complete_ = false;
  std::int32_t next_xid_ = 1;  // the server answers with the request's xid; the C client never sees these
  int requests_ = 0;
  std::string failure_;
  bool refused_by_server_ = false;
};

}  // namespace zkverify::probes
