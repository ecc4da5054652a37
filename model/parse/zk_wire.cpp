#include "model/parse/zk_wire.hpp"

namespace zkverify::wire {

namespace {

std::uint32_t read_u32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

std::int32_t read_i32(std::string_view bytes, std::size_t at) { return static_cast<std::int32_t>(read_u32(bytes, at)); }

std::int64_t read_i64(std::string_view bytes, std::size_t at) {
  auto high = static_cast<std::uint64_t>(read_u32(bytes, at));
  return static_cast<std::int64_t>((high << 32) | read_u32(bytes, at + 4));
}

void put_i32(std::string& out, std::int32_t value) {
  auto bits = static_cast<std::uint32_t>(value);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((bits >> shift) & 0xff));
}

void set_i32(std::string& out, std::size_t at, std::int32_t value) {
  auto bits = static_cast<std::uint32_t>(value);
  for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<char>((bits >> (24 - 8 * i)) & 0xff);
}

}  // namespace

std::optional<std::string> FrameReader::next() {
  if (malformed_ || pending_.size() < 4) return std::nullopt;
  auto length = read_i32(pending_, 0);
  if (length < 0 || static_cast<std::size_t>(length) > kMaxFrame) {
    malformed_ = true;
    return std::nullopt;
  }
  auto size = static_cast<std::size_t>(length);
  if (pending_.size() < 4 + size) return std::nullopt;
  auto packet = pending_.substr(4, size);
  pending_.erase(0, 4 + size);
  return packet;
}

std::string frame(std::string_view payload) {
  std::string out;
  out.reserve(4 + payload.size());
  put_i32(out, static_cast<std::int32_t>(payload.size()));
  out.append(payload);
  return out;
}

// ConnectRequest: protocolVersion (4), lastZxidSeen (8), timeOut (4), sessionId (8), passwd, ...
std::optional<std::int64_t> connect_request_session(std::string_view payload) {
  if (payload.size() < 24) return std::nullopt;
  return read_i64(payload, 16);
}

// ConnectResponse: protocolVersion (4), timeOut (4), sessionId (8), passwd, [readOnly].
std::optional<std::int32_t> connect_response_timeout(std::string_view payload) {
  if (payload.size() < 16) return std::nullopt;
  return read_i32(payload, 4);
}

std::string expired_connect_response(std::string payload) {
  if (payload.size() >= 8) set_i32(payload, 4, 0);
  return payload;
}

std::string sasl_request(std::int32_t xid, std::string_view token) {
  std::string payload;
  put_i32(payload, xid);
  put_i32(payload, kSaslOp);
  put_i32(payload, static_cast<std::int32_t>(token.size()));
  payload.append(token);
  return frame(payload);
}

// ReplyHeader: xid (4), zxid (8), err (4); then SetSASLResponse's buffer when the server sent one.
std::optional<SaslReply> parse_sasl_reply(std::string_view payload) {
  if (payload.size() < 16) return std::nullopt;
  SaslReply reply{read_i32(payload, 0), read_i32(payload, 12), {}};
  if (payload.size() == 16) return reply;
  if (payload.size() < 20) return std::nullopt;
  auto length = read_i32(payload, 16);
  if (length < 0) return reply;  // null
  if (payload.size() - 20 < static_cast<std::size_t>(length)) return std::nullopt;
  reply.token.assign(payload.substr(20, static_cast<std::size_t>(length)));
  return reply;
}

}  // namespace zkverify::wire
