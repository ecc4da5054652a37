// The round trip's checks: access under ACLs, the write, the reads after sync, the cleanup.

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/judge/check_parts.hpp"
#include "model/judge/client_changes.hpp"
#include "model/judge/derived.hpp"

namespace zkverify {

namespace {

// The servers whose sessions ended refused (AUTHFAILED): the writer's, then the readers'.
std::vector<std::string> refused_sessions(const RoundTrip& trip) {
  std::vector<std::string> refused;
  if (trip.write_error == ZkError::auth_failed) refused.push_back(trip.writer);
  for (const auto& read : trip.reads)
    if ((read.error == ZkError::auth_failed || read.marker_error == ZkError::auth_failed) &&
        std::ranges::find(refused, read.server) == refused.end())
      refused.push_back(read.server);
  return refused;
}

// "scheme digest", "schemes digest, world", or why the ACL could not be read.
std::string describe_acl(const RoundTrip& trip) {
  if (trip.acl_error == ZkError::ok && !trip.acl_schemes.empty())
    return fmt::format("{} {}", trip.acl_schemes.size() == 1 ? "scheme" : "schemes", fmt::join(trip.acl_schemes, ", "));
  if (trip.acl_error == ZkError::no_auth) return "scheme unknown: the ACL itself is not readable without permission";
  return fmt::format("scheme unknown: reading the ACL failed: {}", to_string(trip.acl_error));
}

// A write that ran out of time (no error from a server) while srvr shows one leader and a serving
// quorum: followers follow only a leader a quorum elected, so the quorum is there but did not
// commit in time (the first write of a fresh ensemble on a cold disk, a loaded leader). Not safe
// to go on (degraded), but not the outage a refused write or a lost quorum is (critical).
bool write_only_slow(const RoundTrip& trip, const Derived& derived) {
  bool timed_out = trip.namespace_error == ZkError::deadline_exceeded || trip.write_error == ZkError::deadline_exceeded;
  return timed_out && derived.leaders.size() == 1 && !derived.no_quorum;
}

// Followers that answer zxid 0x0 beside a leader that has committed in its epoch: they have left it
// and are electing (seen on 3.8.0 with the leader's pod cut off). Not an older epoch alone: right
// after an election followers report the previous epoch's last zxid (0x0 on a fresh ensemble) until
// the first write commits, and still follow; srvr's zxid is the last one applied, so a leader whose
// first write of the epoch is stuck still says counter 0.
std::vector<const ServerRow*> left_the_leader(const Derived& derived) {
  const auto& leader = *std::ranges::find(derived.rows, derived.leaders.front(), &ServerRow::name);
  std::vector<const ServerRow*> left;
  if (!leader.zxid || leader.zxid->counter() == 0) return left;
  for (const auto& row : derived.rows)
    if (row.state == ServerState::follower && row.zxid && row.zxid->value == 0) left.push_back(&row);
  return left;
}

// A write that ran out of time beside one leader: what the followers' own answers say of why.
std::string slow_write_message(const RoundTrip& trip, const Derived& derived) {
  const auto& leader = derived.leaders.front();
  auto left = left_the_leader(derived);
  // Until the followers give the leader up (tickTime x syncLimit), a leader cut off from them looks
  // like a slow one from outside: both are said, with what tells them apart.
  if (left.empty())
    return fmt::format(
        "the write through {} was not committed within the deadline, though {} leads and {} of {} "
        "voters serve: the quorum may be slow (a cold disk, a loaded leader), or {} may be cut off "
        "from its followers, which they notice within tickTime x syncLimit; rerun with a longer "
        "--timeout: a slow quorum then commits, a cut-off leader is replaced",
        trip.writer, leader, derived.serving_voters, derived.voters.voters, leader);
  std::vector<std::string> answers;
  for (const auto* row : left)
    answers.push_back(fmt::format("{} (epoch {}, zxid {})", row->name, row->zxid->epoch(), zxid_hex(*row->zxid)));
  const auto& leader_row = *std::ranges::find(derived.rows, leader, &ServerRow::name);
  return fmt::format(
      "the write through {} was not committed within the deadline: {} says it leads on epoch {}, but "
      "{} of its followers answer with no zxid at all: {}. They have left it and are electing, and no "
      "follower acknowledged the write: {} has lost its followers (a partition, or its pod's network) "
      "and steps down within its sync limit. Find what cuts it off; a longer --timeout will not help",
      trip.writer, leader, leader_row.zxid->epoch(), left.size(), fmt::join(answers, ", "), leader);
}

// Why the namespace node could not be made (a hint where one helps); none when it was.
std::optional<std::string> namespace_failure(const RoundTrip& trip) {
  if (trip.namespace_error == ZkError::ok || trip.namespace_error == ZkError::not_attempted) return std::nullopt;
  auto hint = trip.namespace_error == ZkError::no_node
                  ? " (its parent does not exist; create it or pick another --namespace)"
                  : "";
  return fmt::format("could not create the namespace node through {}: {}{}", trip.writer,
                     to_string(trip.namespace_error), hint);
}

// A read that failed is an outage of the ensemble (critical) only when the reads that succeeded
// are not a majority of the voters: a committed write that a majority read back proves the quorum,
// and the servers that could not sync are down for their clients (degraded), as unreachable ones are.
void check_reads(const RoundTrip& trip, const Derived& derived, Findings& findings) {
  auto observer = [&derived](const std::string& name) {
    auto row = std::ranges::find(derived.rows, name, &ServerRow::name);
    return row != derived.rows.end() && row->state == ServerState::observer;
  };
  auto read_back = std::ranges::count_if(
      trip.reads, [&](const auto& read) { return read.error == ZkError::ok && !observer(read.server); });
  bool quorum_read = read_back >= derived.majority;
  for (const auto& read : trip.reads) {
    if (read.error != ZkError::ok)
      findings.add(
          quorum_read ? FindingCode::read_back_failed : FindingCode::round_trip_failed, read.server,
          fmt::format(
              "reading the write back through {} after sync failed: {}{}", read.server, to_string(read.error),
              quorum_read ? fmt::format(" ({} of {} voters read it back)", read_back, derived.voters.voters) : ""));
    else if (!read.bytes_match)
      findings.add(FindingCode::stale_read, read.server,
                   fmt::format("{} returned other bytes for {} than were written", read.server, trip.path));
  }
  if (trip.removal_error != ZkError::ok)
    findings.add(FindingCode::cleanup_deferred, trip.writer,
                 fmt::format("{} was not removed ({}); it is ephemeral and goes when {} ends or expires the session "
                             "that wrote it",
                             trip.path, to_string(trip.removal_error), trip.writer));
}

// Whether the round trip went as far as its reads (the summary counts them only then).
bool reached_reads(const RoundTrip& trip, const Derived& derived) {
  return !derived.access_refused && !write_only_slow(trip, derived) && !namespace_failure(trip) &&
         trip.write_error == ZkError::ok;
}

// "pzoo-0 and pzoo-1 refused SASL DIGEST-MD5 as kafka: WHY": the servers that refused alike, together.
std::string describe_refusals(const std::vector<SaslRefusal>& refusals) {
  std::vector<std::string> said;
  std::vector<bool> told(refusals.size(), false);
  for (std::size_t i = 0; i < refusals.size(); ++i) {
    if (told[i]) continue;
    auto alike = refusals[i];
    std::vector<std::string> servers;
    for (std::size_t j = i; j < refusals.size(); ++j) {
      const auto& other = refusals[j];
      if (told[j] || other.mechanism != alike.mechanism || other.user != alike.user || other.why != alike.why ||
          other.by_server != alike.by_server)
        continue;
      told[j] = true;
      servers.push_back(other.server);
    }
    alike.server = servers.size() == 1
                       ? servers.front()
                       : fmt::format("{} and {}", fmt::join(servers.begin(), servers.end() - 1, ", "), servers.back());
    said.push_back(describe(alike));
  }
  return fmt::format("{}", fmt::join(said, "; "));
}

// The server that closed a session for want of SASL: the writer when its session was closed so.
std::string closed_for_sasl(const RoundTrip& trip) {
  auto closed = ZkError::session_closed_requires_sasl_auth;
  if (trip.namespace_error == closed || trip.marker_create_error == closed || trip.write_error == closed)
    return trip.writer;
  auto read = std::ranges::find_if(
      trip.reads, [&](const ReadBack& one) { return one.error == closed || one.marker_error == closed; });
  return read == trip.reads.end() ? trip.writer : read->server;
}

}  // namespace

// Sessions the servers will not serve, or a namespace they may not use: one finding of its own,
// reported instead of the round trip's failures. sasl-required (info: the verdict stands on the
// words, as with --no-write, not on a round trip zkverify could not make); else the digest ACLs'
// criticals: auth-required without credentials, auth-failed with credentials the servers refused
// (AUTHFAILED) or the ACL does not grant.
void check_access(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  if (!facts.round_trip) return;
  const auto& trip = *facts.round_trip;
  if (!trip.sasl_refusals.empty()) {
    findings.add(FindingCode::auth_failed, trip.sasl_refusals.size() == 1 ? trip.sasl_refusals.front().server : "",
                 fmt::format("{}. Check {}", describe_refusals(trip.sasl_refusals),
                             trip.sasl_refusals.front().mechanism == "GSSAPI"
                                 ? "--sasl-keytab (or the ticket cache), KRB5_CONFIG and the servers' principals"
                                 : "--sasl-user and --sasl-password-file against the servers' JAAS Server section"));
    return;
  }
  if (derived.sasl_required) {
    auto server = closed_for_sasl(trip);
    findings.add(FindingCode::sasl_required, server,
                 fmt::format("{} closed zkverify's session at its first request (session_closed_requires_sasl_auth): "
                             "the servers require every session to authenticate (enforce.auth.enabled, or "
                             "sessionRequireClientSASLAuth), {}. No round trip was made; the verdict stands on what "
                             "the servers answered without a session, as with --no-write",
                             server,
                             trip.credentials_given
                                 ? "and do not take the digest credentials from --auth-file (digest is not among "
                                   "enforce.auth.schemes): give zkverify a SASL user instead (--sasl-user, "
                                   "--sasl-password-file)"
                                 : "and zkverify presented no credentials: give it a SASL user (--sasl-user USER "
                                   "--sasl-password-file FILE, DIGEST-MD5) or a Kerberos principal (--sasl-mechanism "
                                   "GSSAPI --sasl-keytab FILE)"));
    return;
  }
  if (auto refused = refused_sessions(trip); !refused.empty()) {
    findings.add(FindingCode::auth_failed, refused.size() == 1 ? refused.front() : "",
                 fmt::format("the servers refused the credentials from --auth-file (AUTHFAILED) on {}: check the "
                             "file's USER and PASSWORD and the servers' authentication providers",
                             fmt::join(refused, ", ")));
    return;
  }
  if (trip.denied_path.empty()) return;
  if (trip.credentials_given)
    findings.add(FindingCode::auth_failed, trip.writer,
                 fmt::format("zkverify's credentials (--auth-file, or its SASL user or Kerberos principal) may not "
                             "use the namespace {}: the ACL of {} ({}) refused them (no_auth); give zkverify an "
                             "identity the ACL lists, or a --namespace of its own",
                             trip.namespace_path, trip.denied_path, describe_acl(trip)));
  else
    findings.add(FindingCode::auth_required, trip.writer,
                 fmt::format("the namespace {} is protected by an ACL: the ACL of {} ({}) refused a session without "
                             "credentials (no_auth); pass --auth-file FILE (one line digest:USER:PASSWORD) or set "
                             "ZKVERIFY_AUTH_FILE",
                             trip.namespace_path, trip.denied_path, describe_acl(trip)));
}

void check_round_trip(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  if (facts.write_skipped) {  // a marker-only trip may have run: the ledger judges its reads
    findings.add(FindingCode::write_skipped, "", "round trip skipped (--no-write): no znode written");
    return;
  }
  if (!facts.round_trip) {
    findings.add(FindingCode::round_trip_failed, "", "no round trip: no server is serving");
    return;
  }
  const auto& trip = *facts.round_trip;
  if (derived.access_refused) return;  // check_access said why, once
  if (write_only_slow(trip, derived)) {
    findings.add(FindingCode::write_timed_out, trip.writer, slow_write_message(trip, derived));
    return;
  }
  if (auto failure = namespace_failure(trip)) {
    findings.add(FindingCode::round_trip_failed, trip.writer, *failure);
    return;
  }
  if (trip.write_error != ZkError::ok) {
    findings.add(FindingCode::round_trip_failed, trip.writer,
                 fmt::format("write through {} failed: {}", trip.writer, to_string(trip.write_error)));
    return;
  }
  check_reads(trip, derived, findings);
}

std::optional<RoundTripSummary> round_trip_summary(const EnsembleFacts& facts, const Derived& derived) {
  // Closed for want of SASL, a trip wrote and read nothing: reported as --no-write's, with no round trip.
  if (facts.write_skipped || !facts.round_trip || derived.sasl_required) return std::nullopt;
  const auto& trip = *facts.round_trip;
  RoundTripSummary summary{trip.writer, trip.path, trip.write_zxid, 0, 0, derived.access_refused};
  if (!reached_reads(trip, derived)) return summary;
  for (const auto& read : trip.reads) {
    ++summary.reads_attempted;
    if (read.error == ZkError::ok && read.bytes_match) ++summary.reads_ok;
  }
  return summary;
}

void check_clients(const EnsembleFacts& facts, const Derived& /*derived*/, Findings& findings) {
  if (!facts.round_trip) return;
  for (auto& finding : unread_client_findings(facts.round_trip->clients))
    findings.add(finding.code, std::move(finding.server), std::move(finding.message));
}

}  // namespace zkverify
