#include "model/facts/errors.hpp"

#include "model/facts/named_category.hpp"

#include <array>
#include <string>
#include <utility>

namespace zkverify {
namespace {

constexpr std::array kNames{
    std::pair{ZkError::ok, "ok"},
    std::pair{ZkError::system_error, "system_error"},
    std::pair{ZkError::runtime_inconsistency, "runtime_inconsistency"},
    std::pair{ZkError::data_inconsistency, "data_inconsistency"},
    std::pair{ZkError::connection_loss, "connection_loss"},
    std::pair{ZkError::marshalling_error, "marshalling_error"},
    std::pair{ZkError::unimplemented, "unimplemented"},
    std::pair{ZkError::operation_timeout, "operation_timeout"},
    std::pair{ZkError::bad_arguments, "bad_arguments"},
    std::pair{ZkError::invalid_state, "invalid_state"},
    std::pair{ZkError::new_config_no_quorum, "new_config_no_quorum"},
    std::pair{ZkError::reconfig_in_progress, "reconfig_in_progress"},
    std::pair{ZkError::ssl_connection_error, "ssl_connection_error"},
    std::pair{ZkError::api_error, "api_error"},
    std::pair{ZkError::no_node, "no_node"},
    std::pair{ZkError::no_auth, "no_auth"},
    std::pair{ZkError::bad_version, "bad_version"},
    std::pair{ZkError::no_children_for_ephemerals, "no_children_for_ephemerals"},
    std::pair{ZkError::node_exists, "node_exists"},
    std::pair{ZkError::not_empty, "not_empty"},
    std::pair{ZkError::session_expired, "session_expired"},
    std::pair{ZkError::invalid_callback, "invalid_callback"},
    std::pair{ZkError::invalid_acl, "invalid_acl"},
    std::pair{ZkError::auth_failed, "auth_failed"},
    std::pair{ZkError::closing, "closing"},
    std::pair{ZkError::nothing, "nothing"},
    std::pair{ZkError::session_moved, "session_moved"},
    std::pair{ZkError::not_read_only, "not_read_only"},
    std::pair{ZkError::ephemeral_on_local_session, "ephemeral_on_local_session"},
    std::pair{ZkError::no_watcher, "no_watcher"},
    std::pair{ZkError::reconfig_disabled, "reconfig_disabled"},
    std::pair{ZkError::session_closed_requires_sasl_auth, "session_closed_requires_sasl_auth"},
    std::pair{ZkError::throttled_op, "throttled_op"},
    std::pair{ZkError::deadline_exceeded, "deadline_exceeded"},
    std::pair{ZkError::not_attempted, "not_attempted"},
};

}  // namespace

ZkError zk_error_from_code(int code) {
  for (auto [error, name] : kNames)
    if (static_cast<int>(error) == code) return error;
  return ZkError::system_error;
}

std::string_view to_string(ZkError error) {
  for (auto [known, name] : kNames)
    if (known == error) return name;
  return "unknown";
}

std::string_view to_string(ProbeError error) {
  switch (error) {
    case ProbeError::ok: return "ok";
    case ProbeError::resolve_failed: return "resolve_failed";
    case ProbeError::connect_refused: return "connect_refused";
    case ProbeError::connect_timeout: return "connect_timeout";
    case ProbeError::read_timeout: return "read_timeout";
    case ProbeError::reset: return "reset";
    case ProbeError::reply_too_large: return "reply_too_large";
    case ProbeError::http_error: return "http_error";
    case ProbeError::tls_failed: return "tls_failed";
    case ProbeError::not_serving: return "not_serving";
    case ProbeError::not_whitelisted: return "not_whitelisted";
    case ProbeError::malformed: return "malformed";
  }
  return "unknown";
}

const std::error_category& zookeeper_category() {
  static const NamedCategory<ZkError> category("zookeeper");
  return category;
}

const std::error_category& probe_category() {
  static const NamedCategory<ProbeError> category("probe");
  return category;
}

std::error_code make_error_code(ZkError error) { return {static_cast<int>(error), zookeeper_category()}; }
std::error_code make_error_code(ProbeError error) { return {static_cast<int>(error), probe_category()}; }

}  // namespace zkverify
