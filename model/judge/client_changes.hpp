#pragma once
// What became of the clients' registrations between two looks (before and after a step, or the
// ledger's last run and this one): each one kept (same session), renewed (a new session: the old
// one ended and the client registered again), gone, or new. A registration missing from the first
// look is never blamed on what came between.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/books/registration_log.hpp"
#include "model/books/watch_book.hpp"
#include "model/facts/registrations.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

enum class RegistrationChange { kept, renewed, gone, added };

struct RegistrationDelta {
  RegistrationChange change = RegistrationChange::kept;
  std::string path;
  Registration before;  // empty for `added`
  Registration after;   // empty for `gone`
};

// Registrations compared path by path, in path order. Only the --clients paths both looks read
// (ok, or no_node: nothing there) are compared: a path one of them could not read says nothing.
std::vector<RegistrationDelta> compare_registrations(const std::vector<ClientPathRead>& before,
                                                     const std::vector<ClientPathRead>& after);

// What is known of the time between the two looks, for what a lost session's finding says of its cause.
struct LossContext {
  std::string when;                                     // between which looks: "during the step on pzoo-0"
  std::map<int, std::string> servers_by_id{};           // names the server that created a lost session
  std::string restarted{};                              // the server the step restarted; empty: no step
  std::optional<std::chrono::milliseconds> downtime{};  // how long it did not serve
  std::chrono::milliseconds leaderless{0};              // how long the ensemble had no leader
  // Where the restarted server listed its sessions before the step (cons): those on it, with the
  // timeout each was granted, against its downtime.
  std::optional<ConsFacts> on_restarted{};
  // What a live follower saw between the two looks (the watch engine's, with --clients): when a lost
  // registration went and when it was held again.
  std::vector<RegistrationAbsence> seen{};
};

// The last registrations seen of each path, for the next look to be compared with: the paths `reads`
// could read replace theirs in `kept`, a path it could not read keeps its last (sorted by path).
void remember_client_reads(std::vector<ClientPathRead>& kept, const std::vector<ClientPathRead>& reads);

// The findings the changes make: client-session-lost for a renewed registration, client-gone for
// one gone, controller-moved for Kafka's /controller held by a new session (with /controller_epoch's
// change). Each says when, and what the evidence says of the cause: the server that created the lost
// session (its id's top byte), whether the step restarted it and for how long, and how long no
// leader led. Kept and new say nothing.
std::vector<Finding> client_findings(const std::vector<ClientPathRead>& before,
                                     const std::vector<ClientPathRead>& after, const LossContext& context);

// clients-unread for every path this look could not read (an error other than no_node).
std::vector<Finding> unread_client_findings(const std::vector<ClientPathRead>& reads);

// The broker /controller's data names ({"version":1,"brokerid":2,...}); none when it does not parse.
std::optional<long long> controller_broker(const std::string& data);

// clients-on-server (info) when `server`, about to restart, holds sessions that hold registrations
// (`cons`: session ids and timeouts); none when it holds none.
std::optional<Finding> clients_on_server(const std::vector<ClientPathRead>& reads, const ConsFacts& cons,
                                         const std::string& server);

// What a live follower says (watch --clients) of the change from its `last` look to this one (`now`):
// each registration gone, back (held again: by a new session when the `first` look saw another, and
// that session ended) or new (not in the first look), with which session holds it. In path order.
struct ClientEvent {
  WatchEventKind kind = WatchEventKind::client_gone;
  std::string detail;
};
std::vector<ClientEvent> client_events(const std::vector<ClientPathRead>& first,
                                       const std::vector<ClientPathRead>& last, const std::vector<ClientPathRead>& now);

// One of the findings above: about the clients, not the step's own restart.
bool about_clients(const Finding& finding);

// "Kafka broker 9 (/brokers/ids/9)" for a Kafka broker's registration, else the path.
std::string client_name(const std::string& path);
// "broker 9", "controller", or the path: for narrow places (the roll report's lane labels).
std::string client_short_name(const std::string& path);

}  // namespace zkverify
