#pragma once
// The vocabulary of findings: one enum, one table (its name as JSON and text print it, its usual
// severity, what it means, what to do). Producers and consumers use the enum; only renderers print
// the name. docs/findings.md is generated from the table (tests/tools/findings_doc).

#include <optional>
#include <span>
#include <string_view>

namespace zkverify {

enum class Severity { info, warning, critical };

enum class FindingCode {
  // quorum: the servers
  unreachable,
  not_serving,
  bad_reply,
  standalone,
  read_only,
  // quorum: leader and votes
  multiple_leaders,
  no_leader,
  leader_unlisted,
  no_quorum,
  voters_counted,
  voters_uncertain,
  // quorum: membership
  membership_mismatch,
  split_brain_possible,
  membership_changing,
  config_behind,
  duplicate_id,
  id_address_mismatch,
  membership_unknown,
  membership_unlisted,
  // quorum: sync
  followers_not_synced,
  epoch_mismatch,
  sync_unverified,
  // quorum: the round trip
  write_skipped,
  round_trip_failed,
  read_back_failed,
  write_timed_out,
  stale_read,
  cleanup_deferred,
  auth_required,
  auth_failed,
  sasl_required,
  // quorum: what zkverify could use
  not_whitelisted,
  admin_unavailable,
  mixed_versions,
  tls_cert_expiring,
  kerberos_expiring,
  // the ledger (--state)
  data_loss,
  marker_unread,
  marker_recorded,
  node_count_drop,
  epoch_changed,
  leader_changed,
  membership_changed,
  // the watch
  session_expired,
  ephemeral_lost,
  writes_lost,
  writes_out_of_order,
  unavailable_too_long,
  // step and roll
  command_timed_out,
  command_failed,
  interrupted,
  not_restarted,
  not_recovered,
  // the clients' registrations (--clients)
  client_session_lost,
  client_gone,
  controller_moved,
  clients_unread,
  clients_on_server,
  clients_moved,
  ephemerals_fell,
  election_outlasts_timeouts,
};

struct FindingInfo {
  FindingCode code;
  std::string_view name;                   // "no-quorum": stable, for scripts (JSON "code")
  Severity severity;                       // the usual one; a producer may say otherwise (the reference lists which)
  std::string_view meaning;                // one line
  std::string_view action;                 // what to do, one line
  std::string_view other_severities = {};  // e.g. "info when ...": where a producer differs
};

// Every code's row, in the enum's order.
std::span<const FindingInfo> finding_table();
const FindingInfo& info(FindingCode code);
// The stable name ("no-quorum").
std::string_view to_string(FindingCode code);
// The code with that name; none for a name the table does not have.
std::optional<FindingCode> finding_code_named(std::string_view name);

std::string_view to_string(Severity severity);

}  // namespace zkverify
