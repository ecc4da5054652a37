#include "model/judge/findings.hpp"

#include <algorithm>
#include <array>

namespace zkverify {

namespace {

using enum FindingCode;

// One row per code, in the enum's order (checked at compile time below).
constexpr std::array kTable{
    FindingInfo{unreachable, "unreachable", Severity::warning,
                "A listed server did not answer srvr: refused, no route, a name that does not resolve, or no reply by "
                "the deadline.",
                "Check the process, the address in --servers and the network; the row's error says which."},
    FindingInfo{
        not_serving, "not-serving", Severity::warning,
        "The server is up but answers \"not currently serving requests\": it has no quorum or is still joining one.",
        "Wait for it to join (quorum --wait); if it stays so, read its log for the election."},
    FindingInfo{bad_reply, "bad-reply", Severity::warning,
                "The server answered srvr with something zkverify cannot read.",
                "Check that the port is a ZooKeeper client port; the row's error quotes what came back."},
    FindingInfo{standalone, "standalone", Severity::warning,
                "A server of a listed ensemble runs standalone: it serves its own data, not the ensemble's.",
                "Fix its zoo.cfg (server.N lines, standaloneEnabled) and restart it."},
    FindingInfo{read_only, "read-only", Severity::warning, "The server runs in read-only mode: it has lost the quorum.",
                "Find out why it cannot reach a quorum (the other servers, the network)."},
    FindingInfo{multiple_leaders, "multiple-leaders", Severity::critical, "More than one listed server says it leads.",
                "Stop: two ensembles share names or the membership is split; compare each server's conf."},
    FindingInfo{no_leader, "no-leader", Severity::critical,
                "No server says it leads and none follows: the ensemble is electing or has no quorum.",
                "Do not restart anything; wait for the election, then look at the servers that are down."},
    FindingInfo{leader_unlisted, "leader-unlisted", Severity::warning,
                "Listed servers follow a leader that is not among the listed servers.",
                "List every server in --servers (the finding names the membership's unlisted ids when known)."},
    FindingInfo{no_quorum, "no-quorum", Severity::critical,
                "Fewer than a majority of the voters serve as leader or follower.",
                "Bring voters back one at a time; restart nothing that serves."},
    FindingInfo{voters_counted, "voters-counted", Severity::info,
                "The number of voters was estimated (mntr's zk_quorum_size, or the listed servers less the observers), "
                "not read from a membership.",
                "Whitelist conf, or give --admin-port, so the membership is read."},
    FindingInfo{voters_uncertain, "voters-uncertain", Severity::warning,
                "Fewer servers serve as voters than the estimated voter count needs for a quorum, yet a write was "
                "committed, which only a quorum of voters does: the estimate is wrong (an unreachable server was "
                "probably an observer). The quorum holds now, but how close it is to being lost is not known.",
                "Whitelist conf or mntr (4lw.commands.whitelist), or give --admin-port, so the voters are counted "
                "from the membership; with --state, observers seen earlier are remembered."},
    FindingInfo{membership_mismatch, "membership-mismatch", Severity::warning,
                "Servers list the same voters with other addresses or roles.",
                "Give every server the same server.N lines (or reconfig) before going on."},
    FindingInfo{split_brain_possible, "split-brain-possible", Severity::critical,
                "Servers hold membership lists with disjoint majorities: each list can elect a leader of its own, "
                "and the ensemble can split in two that accept writes apart (5 servers to 7 in one step does).",
                "Restart no server onto the other list. Change the membership one server at a time (5, 6, 7: each "
                "list's majorities meet the next one's), or with reconfig."},
    FindingInfo{membership_changing, "membership-changing", Severity::info,
                "Servers hold different membership lists whose majorities always meet: a change in progress, one "
                "leader at a time.",
                "Go on with the change; each step's gate checks the lists again."},
    FindingInfo{config_behind, "config-behind", Severity::warning,
                "After a dynamic reconfig, servers still hold an older configuration version than the newest "
                "one: they have not applied the reconfig yet.",
                "Wait until every server reports the newest version (quorum --wait); a server applies it when it "
                "syncs with the leader."},
    FindingInfo{duplicate_id, "duplicate-id", Severity::warning,
                "Two listed servers report the same server id (critical when they are provably two servers: the "
                "leader counts more voting followers than its list has, their names reach two addresses, or they "
                "hold other lists or run other releases). No restart verdict is given while it lasts.",
                "Give the server its list does not place at that id a myid of its own (or list each server once) "
                "before anything else restarts."},
    FindingInfo{id_address_mismatch, "id-address-mismatch", Severity::critical,
                "A server reports an id that its list gives another server: the host it is listed at is that "
                "other id's in the server.N lines.",
                "Fix its myid (or the id offset that computes it) so that it matches its server.N line; restart "
                "nothing else until it does."},
    FindingInfo{membership_unknown, "membership-unknown", Severity::warning,
                "A listed server's id is not in the ensemble's membership (a server started to join by reconfig "
                "holds the leader's list until it is added).",
                "The server is not a member: fix its myid or the server.N lines."},
    FindingInfo{membership_unlisted, "membership-unlisted", Severity::warning,
                "The membership has servers that are not listed.",
                "List every member in --servers, or remove the stale server.N lines."},
    FindingInfo{followers_not_synced, "followers-not-synced", Severity::warning,
                "The leader counts fewer synced followers than the ensemble has other voters.",
                "Wait for the followers to sync (quorum --wait) before restarting another server."},
    FindingInfo{
        epoch_mismatch, "epoch-mismatch", Severity::warning,
        "A serving server is on another epoch than the one the round trip wrote in.",
        "Wait and check again: a server that stays behind never caught up.",
        "info without a round trip: right after an election followers report the old epoch until the first write"},
    FindingInfo{sync_unverified, "sync-unverified", Severity::info,
                "Follower sync could not be verified: neither the leader's mntr nor a round trip was available.",
                "Whitelist mntr, or run without --no-write."},
    FindingInfo{write_skipped, "write-skipped", Severity::info,
                "The round trip was skipped (--no-write): nothing was written.",
                "Run without --no-write for the proof that a quorum commits."},
    FindingInfo{round_trip_failed, "round-trip-failed", Severity::critical,
                "The test znode could not be written, or not read back after sync through a serving server.",
                "The ensemble does not commit or does not serve reads: do not go on; the message names the server and "
                "the error."},
    FindingInfo{read_back_failed, "read-back-failed", Severity::warning,
                "The write committed and a majority of the voters read it back after sync, but some servers could "
                "not: they serve no reads (cut off from the leader, or overloaded).",
                "Not safe to go on: find out why the named servers cannot sync (their logs, the network between "
                "them and the leader); ZooKeeper drops a follower that cannot reach its leader after "
                "tickTime x syncLimit."},
    FindingInfo{
        write_timed_out, "write-timed-out", Severity::warning,
        "Every voter serves, one leads and the followers are synced, but the write was not committed by the deadline.",
        "Not safe to go on until a write commits: rerun with a longer --timeout, and check the leader's disk and "
        "load."},
    FindingInfo{stale_read, "stale-read", Severity::critical,
                "A read after sync returned other data than was written, or missed acknowledged writes.",
                "Stop: a server serves data the quorum did not commit; compare the servers' zxids."},
    FindingInfo{cleanup_deferred, "cleanup-deferred", Severity::info,
                "The round trip's ephemeral znode was not removed in time; it goes when its session ends.",
                "Nothing to do: the server expires the session."},
    FindingInfo{auth_required, "auth-required", Severity::critical,
                "The namespace is protected by an ACL and the sessions presented no credentials.",
                "Pass --auth-file FILE (one line digest:USER:PASSWORD) or set ZKVERIFY_AUTH_FILE."},
    FindingInfo{auth_failed, "auth-failed", Severity::critical,
                "The servers refused the credentials (digest, or SASL), or the ACL does not grant them the namespace.",
                "Check --auth-file's USER and PASSWORD (or --sasl-user and --sasl-password-file), the ACL and the "
                "servers' authentication providers."},
    FindingInfo{sasl_required, "sasl-required", Severity::info,
                "The servers closed zkverify's sessions at their first request (session_closed_requires_sasl_auth): "
                "they require every session to authenticate (enforce.auth.enabled=true with enforce.auth.schemes=sasl, "
                "or sessionRequireClientSASLAuth). No round trip was made; the verdict stands on what the servers "
                "answer without a session, as with --no-write.",
                "Give zkverify a SASL user of the servers' JAAS Server section: --sasl-user USER --sasl-password-file "
                "FILE; for Kerberos, --sasl-mechanism GSSAPI --sasl-keytab FILE (docs/credentials.md)."},
    FindingInfo{not_whitelisted, "not-whitelisted", Severity::info,
                "Some four-letter words are not whitelisted; zkverify used srvr instead.",
                "Add the zoo.cfg line the finding gives (4lw.commands.whitelist=...) for richer checks."},
    FindingInfo{admin_unavailable, "admin-unavailable", Severity::info,
                "The AdminServer given by --admin-port could not be used.",
                "Check the port and admin.enableServer; the message says what failed."},
    FindingInfo{mixed_versions, "mixed-versions", Severity::info, "Servers run different ZooKeeper versions.",
                "Expected during an upgrade; finish the roll."},
    FindingInfo{tls_cert_expiring, "tls-cert-expiring", Severity::warning,
                "A server's TLS certificate, or zkverify's own client certificate, expires within "
                "--tls-expiry-warning (default 14 days), or zkverify's has expired.",
                "Renew it before it expires (cert-manager: check the Certificate's status); an expired one ends "
                "every TLS connection it is used for."},
    FindingInfo{kerberos_expiring, "kerberos-expiring", Severity::warning,
                "zkverify's Kerberos ticket (a ticket cache's, without --sasl-keytab) ends within the hour, or its "
                "principal's key or account expires within 14 days.",
                "Renew the ticket (kinit -R) or give zkverify a keytab (--sasl-keytab); ask the realm's admins to "
                "extend an expiring principal (kadmin modprinc) before its sessions are refused."},
    FindingInfo{data_loss, "data-loss", Severity::critical,
                "The ensemble lost data zkverify had seen: the zxid went backwards, or the durability marker is gone "
                "or was recreated.",
                "Stop the upgrade and restore; transaction logs were likely not on persistent storage. Only "
                "--reset-state clears it."},
    FindingInfo{marker_unread, "marker-unread", Severity::warning,
                "The durability marker could not be read: data loss was not checked this run.",
                "Check again; the message names the server and the error."},
    FindingInfo{marker_recorded, "marker-recorded", Severity::info,
                "The durability marker was created and recorded in the ledger.", "Nothing to do: later runs check it."},
    FindingInfo{node_count_drop, "node-count-drop", Severity::warning,
                "The leader holds less than half the znodes the last run saw.",
                "Check whether data was deleted on purpose; if not, treat it as data loss."},
    FindingInfo{epoch_changed, "epoch-changed", Severity::info, "A leader was elected since the last run.",
                "Nothing to do."},
    FindingInfo{leader_changed, "leader-changed", Severity::info, "The leader moved since the last run.",
                "Nothing to do."},
    FindingInfo{membership_changed, "membership-changed", Severity::info, "The membership changed since the last run.",
                "Make sure the change was intended."},
    FindingInfo{session_expired, "session-expired", Severity::critical,
                "Client sessions of the watch expired: their ephemeral znodes and watches are gone.",
                "Clients saw an outage: restart servers more slowly, or raise the session timeout."},
    FindingInfo{ephemeral_lost, "ephemeral-lost", Severity::critical,
                "Ephemeral znodes of live watch sessions vanished.", "Stop: the ensemble lost data of live sessions."},
    FindingInfo{writes_lost, "writes-lost", Severity::critical,
                "Acknowledged writes of the watch were missing after sync.",
                "Stop the upgrade: acknowledged data was lost (transaction logs not persistent?)."},
    FindingInfo{writes_out_of_order, "writes-out-of-order", Severity::critical,
                "A client's writes were applied out of the order it sent them.",
                "Stop: ZooKeeper's ordering guarantee was broken; collect the servers' logs."},
    FindingInfo{unavailable_too_long, "unavailable-too-long", Severity::critical,
                "Writes failed for longer than --max-unavailable in a row.",
                "Restart servers one at a time and wait for the election to settle between them."},
    FindingInfo{command_timed_out, "command-timed-out", Severity::warning,
                "COMMAND was still running at the step's deadline and was terminated.",
                "Find out why the restart hung before trying again."},
    FindingInfo{command_failed, "command-failed", Severity::warning, "COMMAND exited with a status other than 0.",
                "Read its output; fix it and run the step again."},
    FindingInfo{interrupted, "interrupted", Severity::warning, "A signal stopped the step before its end.",
                "Run zkverify quorum to see where the ensemble is."},
    FindingInfo{not_restarted, "not-restarted", Severity::warning,
                "The server was never seen down and its srvr Received count never fell: COMMAND did not restart it.",
                "Use a COMMAND that waits for the server to stop (kubectl delete pod --wait)."},
    FindingInfo{not_recovered, "not-recovered", Severity::warning,
                "The ensemble was not healthy --stable times in a row after the restart.",
                "Do not go on: look at the last check's findings.", "critical when the last check was critical"},
    FindingInfo{client_session_lost, "client-session-lost", Severity::warning,
                "A client's registration (an ephemeral znode under a --clients path, such as a Kafka broker's "
                "/brokers/ids/N) is held by a new session: the session that held it ended (it expired, or the "
                "client closed it) and the client registered again. The client saw an outage.",
                "Do not go on until you know why: the next restart may cost it again. Restart more slowly (wait "
                "for the clients to reconnect), give the client every server in its connect string, or raise its "
                "session timeout (Kafka: zookeeper.session.timeout.ms)."},
    FindingInfo{client_gone, "client-gone", Severity::warning,
                "A client's registration that was there before is not there now, and no session holds it again: "
                "its session ended, or the client removed it and left.",
                "Find the client (the path names it): if it should be running, it has not come back."},
    FindingInfo{controller_moved, "controller-moved", Severity::warning,
                "Kafka's /controller is held by a new session: the controller failed over (its broker's session "
                "ended, or it resigned); partitions' leadership moved with it.",
                "Check the brokers' logs and under-replicated partitions before the next restart."},
    FindingInfo{clients_unread, "clients-unread", Severity::warning,
                "A --clients path could not be read (no session, no permission, or the deadline): its "
                "registrations were not compared.",
                "Check again; the message names the path and the error."},
    FindingInfo{clients_on_server, "clients-on-server", Severity::info,
                "Before a restart (cons whitelisted on that server): the registrations whose sessions the server "
                "about to restart holds, each with the session timeout the server granted it. Each must reach "
                "another server within that timeout, or its session expires.",
                "Nothing to do when the clients list every server and the restart is quick; a client that names "
                "only this server will lose its session (client-session-lost after the step)."},
    FindingInfo{clients_moved, "clients-moved", Severity::info,
                "During a restart: where the restarted server's client connections went, from srvr's connection "
                "counts polled on every server (the other servers' gains since the last poll that found it "
                "serving), and how fast; or how many of them did before it served again.",
                "Nothing, when they all moved quickly. Connections that did not move belong to clients that "
                "wait for this server: those that name only it in their connect string lose their sessions "
                "when it is down for longer than their timeout."},
    FindingInfo{ephemerals_fell, "ephemerals-fell", Severity::info,
                "During a restart (mntr whitelisted): the whole tree's count of ephemeral nodes, asked of one "
                "server before COMMAND and again once the ensemble had recovered, fell. Sessions that held "
                "them ended (or their clients deleted them): clients that register with ephemerals lost "
                "their registrations, for a while at least.",
                "Find whose: --clients PATH (the kafka preset: /brokers/ids and /controller) names them, and "
                "says whether they came back under new sessions."},
    FindingInfo{election_outlasts_timeouts, "election-outlasts-timeouts", Severity::info,
                "Before the leader's step (cons whitelisted): the last election a step saw (the ledger's, "
                "--state) went longer without a leader than some clients' session timeouts. Every client is "
                "disconnected during an election; many client libraries declare a session lost once "
                "disconnected for its timeout (Curator; Pulsar's brokers restart), whatever the server keeps.",
                "Raise those clients' session timeouts, or make the election quicker (a leader whose followers "
                "are in sync; no slow disks), before restarting the leader; --clients names the clients."},
};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].code) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kTable lists the codes in FindingCode's order, one row each");
static_assert(kTable.size() == static_cast<std::size_t>(election_outlasts_timeouts) + 1, "every FindingCode has a row");

}  // namespace

std::span<const FindingInfo> finding_table() { return kTable; }

const FindingInfo& info(FindingCode code) { return kTable[static_cast<std::size_t>(code)]; }

std::string_view to_string(FindingCode code) { return info(code).name; }

std::optional<FindingCode> finding_code_named(std::string_view name) {
  auto row = std::ranges::find(kTable, name, &FindingInfo::name);
  if (row == kTable.end()) return std::nullopt;
  return row->code;
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::critical: return "critical";
  }
  return "unknown";
}

}  // namespace zkverify
