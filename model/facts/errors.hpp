#pragma once
// How talking to a server failed: two enums, each an std::error_code category, so every failure
// travels as an error_code (or one of these enums) and prints by one name. A command's own
// failures are model/facts/failure.hpp's.
// - ZkError: what a ZooKeeper session answers, mirroring the C client's ZOO_ERRORS (values
//   identical), plus the outcomes zkverify imposes (deadline_exceeded, not_attempted).
// - ProbeError: how a four-letter word or an AdminServer request ended: the transport, then the
//   reply (not serving, not whitelisted, malformed).

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace zkverify {

enum class ZkError : int {
  ok = 0,
  system_error = -1,
  runtime_inconsistency = -2,
  data_inconsistency = -3,
  connection_loss = -4,
  marshalling_error = -5,
  unimplemented = -6,
  operation_timeout = -7,
  bad_arguments = -8,
  invalid_state = -9,
  new_config_no_quorum = -13,
  reconfig_in_progress = -14,
  ssl_connection_error = -15,
  api_error = -100,
  no_node = -101,
  no_auth = -102,
  bad_version = -103,
  no_children_for_ephemerals = -108,
  node_exists = -110,
  not_empty = -111,
  session_expired = -112,
  invalid_callback = -113,
  invalid_acl = -114,
  auth_failed = -115,
  closing = -116,
  nothing = -117,
  session_moved = -118,
  not_read_only = -119,
  ephemeral_on_local_session = -120,
  no_watcher = -121,
  reconfig_disabled = -123,
  session_closed_requires_sasl_auth = -124,
  throttled_op = -127,
  // zkverify's own, outside the C client's range:
  deadline_exceeded = -1000,  // our deadline passed before the server answered
  not_attempted = -1001,      // skipped: an earlier step failed or the server was not serving
};

// Maps a C client return code; codes this enum does not know become system_error.
ZkError zk_error_from_code(int code);

// A short stable name ("connection_loss"), as shown in findings and JSON.
std::string_view to_string(ZkError error);

enum class ProbeError : int {
  ok = 0,
  // the transport
  resolve_failed = 1,
  connect_refused,
  connect_timeout,  // no TCP connection within the deadline
  read_timeout,     // connected, but the reply did not end (server closed) within the deadline
  reset,            // connection reset or other socket error
  reply_too_large,  // the reply exceeded the size cap
  http_error,       // AdminServer: a non-200 status or an unparsable HTTP response
  tls_failed,       // the TLS handshake or session failed, or the port speaks the other protocol
  // the reply, once it arrived whole
  not_serving,      // "This ZooKeeper instance is not currently serving requests"
  not_whitelisted,  // "<word> is not executed because it is not in the whitelist."
  malformed,        // something else: the reply's detail says what
};

// A short stable name ("connect_refused").
std::string_view to_string(ProbeError error);

const std::error_category& zookeeper_category();
const std::error_category& probe_category();
std::error_code make_error_code(ZkError error);
std::error_code make_error_code(ProbeError error);

}  // namespace zkverify

template <>
struct std::is_error_code_enum<zkverify::ZkError> : std::true_type {};
template <>
struct std::is_error_code_enum<zkverify::ProbeError> : std::true_type {};
