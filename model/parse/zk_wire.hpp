#pragma once
// The few ZooKeeper client-protocol packets the relay reads and writes itself (the SASL exchange it
// makes for the C client: probes/relay.cpp), as pure functions over bytes. Everything else the relay
// carries without reading it. Jute's encoding: big-endian integers, a buffer as its int32 length
// (-1: null) then its bytes; every packet framed by its int32 length.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zkverify::wire {

inline constexpr std::int32_t kSaslOp = 102;  // OpCode.sasl

// Collects bytes as they arrive and hands out whole packets (without their length prefix).
class FrameReader {
 public:
  // Frames longer than this are refused (the relay reads only handshake packets, a few KiB).
  static constexpr std::size_t kMaxFrame = 1 << 20;
  void feed(std::string_view bytes) { pending_.append(bytes); }
  // The next whole packet, if one has arrived; none ever again once a length was below 0 or above
  // kMaxFrame (malformed()).
  std::optional<std::string> next();
  [[nodiscard]] bool malformed() const { return malformed_; }
  // Bytes received beyond the packets handed out (what follows the handshake, to pass on).
  [[nodiscard]] const std::string& rest() const { return pending_; }

 private:
  std::string pending_;
  bool malformed_ = false;
};

// `payload` with its length prefix.
std::string frame(std::string_view payload);

// A connect request's session id (0: a new session; else the session it resumes). nullopt when
// the packet is too short to be one.
std::optional<std::int64_t> connect_request_session(std::string_view payload);

// A connect response's granted timeout (0 or less: the server refused to resume the session).
std::optional<std::int32_t> connect_response_timeout(std::string_view payload);
// The same response with its timeout set to 0: the C client takes it as its session expired.
std::string expired_connect_response(std::string payload);

// A SASL request packet (RequestHeader{xid, 102}, GetSASLRequest{token}), framed.
std::string sasl_request(std::int32_t xid, std::string_view token);

struct SaslReply {
  std::int32_t xid = 0;
  std::int32_t error = 0;  // 0 ok; -124 (required and failed), -115 (failed) otherwise
  std::string token;       // SetSASLResponse's; empty also when null
};
// A reply packet (ReplyHeader{xid, zxid, err}, SetSASLResponse{token}); a reply without a body
// (an error) has an empty token. nullopt when malformed.
std::optional<SaslReply> parse_sasl_reply(std::string_view payload);

}  // namespace zkverify::wire
