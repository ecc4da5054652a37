#include "probes/sasl_handshake.hpp"

#include <fmt/format.h>

#include "model/facts/errors.hpp"

namespace zkverify::probes {

void SaslHandshake::from_client(std::string_view bytes) {
  client_.feed(bytes);
  if (need_ != Need::client_bytes) return;
  auto request = client_.next();
  if (client_.malformed()) return fail("the C client's connect request is malformed", false);
  if (!request) return;
  for_server_ += wire::frame(*request);
  need_ = Need::server_bytes;
}

void SaslHandshake::from_server(std::string_view bytes) {
  server_.feed(bytes);
  while (need_ == Need::server_bytes) {
    auto packet = server_.next();
    if (server_.malformed()) return fail("the server sent a malformed packet", false);
    if (!packet) return;
    if (!response_seen_) on_connect_response(*packet);
    else on_reply(*packet);
  }
}

// A server that refused to resume the session (timeout 0) tells the C client so itself: there is
// nothing to authenticate.
void SaslHandshake::on_connect_response(const std::string& packet) {
  auto timeout = wire::connect_response_timeout(packet);
  response_seen_ = true;
  held_ = wire::frame(packet);
  if (!timeout) return fail("the server's connect response is malformed", false);
  if (*timeout <= 0) return succeed();
  auto first = mechanism_.start();
  if (!first.ok) return fail("this host's SASL library: " + first.error, false);
  mechanism_complete_ = first.complete;
  send(first.token);
}

void SaslHandshake::on_reply(std::string_view packet) {
  auto reply = wire::parse_sasl_reply(packet);
  if (!reply) return fail("the server's SASL reply is malformed", false);
  if (reply->error != 0)
    return fail(fmt::format("the server refused it ({})", to_string(static_cast<ZkError>(reply->error))), true);
  if (mechanism_complete_) return succeed();
  auto next = mechanism_.step(reply->token);
  if (!next.ok) return fail("this host's SASL library: " + next.error, false);
  mechanism_complete_ = next.complete;
  if (next.complete && next.token.empty()) return succeed();
  send(next.token);
}

void SaslHandshake::send(const std::string& token) {
  if (++requests_ > kMaxRequests)
    return fail(fmt::format("the exchange did not end after {} requests", kMaxRequests), false);
  for_server_ += wire::sasl_request(next_xid_++, token);
}

// What either side sent beyond the handshake's packets goes on with the connect response.
void SaslHandshake::succeed() {
  for_client_ += std::exchange(held_, {});
  for_client_ += server_.rest();
  for_server_ += client_.rest();
  need_ = Need::done;
}

void SaslHandshake::fail(std::string why, bool by_server) {
  failure_ = std::move(why);
  refused_by_server_ = by_server;
  need_ = Need::failed;
}

}  // namespace zkverify::probes
