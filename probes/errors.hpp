#pragma once
// One error enum for everything the ZooKeeper C client can answer, mirroring its ZOO_ERRORS codes
// (values identical), plus the outcomes the C client cannot report because zkverify imposes them.

#include <string_view>

namespace zkverify::probes {

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

}  // namespace zkverify::probes
