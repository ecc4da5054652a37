#include "model/judge/client_changes.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/facts/time_text.hpp"

namespace zkverify {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr std::string_view kBrokerIds = "/brokers/ids/";
constexpr std::string_view kController = "/controller";
constexpr std::string_view kControllerEpoch = "/controller_epoch";

bool compared(const ClientPathRead& read) { return read.error == ZkError::ok || read.error == ZkError::no_node; }

const ClientPathRead* find_read(const std::vector<ClientPathRead>& reads, const std::string& path) {
  auto found = std::ranges::find(reads, path, &ClientPathRead::path);
  return found == reads.end() ? nullptr : &*found;
}

std::map<std::string, const Registration*> by_path(const ClientPathRead& read) {
  std::map<std::string, const Registration*> held;
  for (const auto& registration : read.held) held.emplace(registration.path, &registration);
  return held;
}

std::string broker_text(const std::string& data) {
  auto broker = controller_broker(data);
  return broker ? fmt::format("broker {}", *broker) : std::string("a broker");
}

std::string epoch_change(const std::vector<ClientPathRead>& before, const std::vector<ClientPathRead>& after) {
  const auto* was = find_read(before, std::string(kControllerEpoch));
  const auto* now = find_read(after, std::string(kControllerEpoch));
  if (!was || !now || was->error != ZkError::ok || now->error != ZkError::ok || was->data == now->data) return "";
  return fmt::format(", controller_epoch {} -> {}", was->data, now->data);
}

// "; session 0x... was created on pzoo-0 (server id 1), which the step kept from serving for 7.6s;
// the ensemble had no leader for 1.2s": what is known, nothing guessed. Empty when nothing is.
std::string cause_text(std::int64_t session, const LossContext& context) {
  std::string text;
  auto creator = static_cast<int>(static_cast<std::uint64_t>(session) >> 56);
  if (auto name = context.servers_by_id.find(creator); name != context.servers_by_id.end()) {
    text = fmt::format("; session {} was created on {} (server id {})", session_text(session), name->second, creator);
    if (name->second == context.restarted)
      text += context.downtime
                  ? fmt::format(", which the step kept from serving for {}", format_duration(*context.downtime))
                  : std::string(", the server the step restarted");
  }
  if (context.on_restarted) {
    const auto& listed = context.on_restarted->connections;
    auto on = std::ranges::find(listed, session, &ClientConnection::session);
    if (on != listed.end())
      text += fmt::format("; before the step its connection was on {}, with a session timeout of {}{}",
                          context.restarted, format_duration(on->timeout),
                          context.downtime && *context.downtime > on->timeout
                              ? fmt::format(", shorter than {}'s downtime", context.restarted)
                              : std::string());
  }
  if (context.leaderless > std::chrono::milliseconds(0))
    text += fmt::format("; the ensemble had no leader for {}", format_duration(context.leaderless));
  return text;
}

// "; followed live: it went at 15:27:00.010Z and was held again 1.1s later": what the follower saw
// of the registration `delta` lost. Empty when it saw nothing of it.
std::string seen_text(const RegistrationDelta& delta, const LossContext& context) {
  auto seen = std::ranges::find_if(context.seen.rbegin(), context.seen.rend(), [&](const RegistrationAbsence& absence) {
    return absence.path == delta.path && absence.owner_before == delta.before.owner;
  });
  if (seen == context.seen.rend()) return "";
  auto when = iso8601(seen->gone.wall, true);
  if (!seen->back) return fmt::format("; followed live: it went at {}", when);
  if (seen->back->steady == seen->gone.steady)
    return fmt::format(
        "; followed live: held by a new session at {}, never seen missing (it went and came back "
        "between two looks, {} apart)",
        when, format_duration(duration_cast<milliseconds>(seen->gone.steady - seen->last_held.steady)));
  return fmt::format("; followed live: it went at {} and was held again {} later", when,
                     format_duration(duration_cast<milliseconds>(seen->back->steady - seen->gone.steady)));
}

Finding renewed_finding(const RegistrationDelta& delta, const LossContext& context, const std::string& epoch) {
  if (delta.path == kController)
    return make_finding(
        FindingCode::controller_moved, "",
        fmt::format("Kafka's controller moved {}: {} (session {}) before, {} (session {}) now{}{}", context.when,
                    broker_text(delta.before.data), session_text(delta.before.owner), broker_text(delta.after.data),
                    session_text(delta.after.owner), epoch, cause_text(delta.before.owner, context)));
  return make_finding(
      FindingCode::client_session_lost, "",
      fmt::format("{}: held by session {} before, by session {} now: that session ended {} (it "
                  "expired, or the client closed it) and the client registered again{}{}",
                  client_name(delta.path), session_text(delta.before.owner), session_text(delta.after.owner),
                  context.when, seen_text(delta, context), cause_text(delta.before.owner, context)));
}

Finding gone_finding(const RegistrationDelta& delta, const LossContext& context) {
  return make_finding(FindingCode::client_gone, "",
                      fmt::format("{}: held by session {} before, not there now: it went {} and the client has not "
                                  "registered again (its session ended, or it removed the node itself){}{}",
                                  client_name(delta.path), session_text(delta.before.owner), context.when,
                                  seen_text(delta, context), cause_text(delta.before.owner, context)));
}

}  // namespace

std::vector<RegistrationDelta> compare_registrations(const std::vector<ClientPathRead>& before,
                                                     const std::vector<ClientPathRead>& after) {
  std::vector<RegistrationDelta> deltas;
  for (const auto& now : after) {
    const auto* was = find_read(before, now.path);
    if (!was || !compared(*was) || !compared(now)) continue;
    auto held_before = by_path(*was);
    auto held_now = by_path(now);
    for (const auto& [path, registration] : held_before) {
      auto found = held_now.find(path);
      if (found == held_now.end()) deltas.push_back({RegistrationChange::gone, path, *registration, {}});
      else
        deltas.push_back(
            {found->second->owner == registration->owner ? RegistrationChange::kept : RegistrationChange::renewed, path,
             *registration, *found->second});
    }
    for (const auto& [path, registration] : held_now)
      if (!held_before.contains(path)) deltas.push_back({RegistrationChange::added, path, {}, *registration});
  }
  std::ranges::sort(deltas, {}, &RegistrationDelta::path);
  return deltas;
}

void remember_client_reads(std::vector<ClientPathRead>& kept, const std::vector<ClientPathRead>& reads) {
  for (const auto& read : reads) {
    if (!compared(read)) continue;  // says nothing: keep the last
    std::erase_if(kept, [&](const ClientPathRead& old) { return old.path == read.path; });
    kept.push_back({read.path, ZkError::ok, read.held, read.data});
  }
  std::ranges::sort(kept, {}, &ClientPathRead::path);
}

std::vector<Finding> client_findings(const std::vector<ClientPathRead>& before,
                                     const std::vector<ClientPathRead>& after, const LossContext& context) {
  std::vector<Finding> findings;
  auto epoch = epoch_change(before, after);
  for (const auto& delta : compare_registrations(before, after)) {
    if (delta.change == RegistrationChange::renewed) findings.push_back(renewed_finding(delta, context, epoch));
    else if (delta.change == RegistrationChange::gone) findings.push_back(gone_finding(delta, context));
  }
  return findings;
}

namespace {

const Registration* held_at(const std::vector<ClientPathRead>& reads, const std::string& path) {
  for (const auto& read : reads)
    for (const auto& registration : read.held)
      if (registration.path == path) return &registration;
  return nullptr;
}

// A registration seen again: how it compares with the one it replaced (`was`: the last look's, else
// the watch's first look's).
ClientEvent back_event(const Registration* was, const Registration& now) {
  if (!was)
    return {WatchEventKind::client_new,
            fmt::format("{}: held by session {}", client_name(now.path), session_text(now.owner))};
  if (was->owner == now.owner)
    return {WatchEventKind::client_back,
            fmt::format("{}: held again by the same session {}", client_name(now.path), session_text(now.owner))};
  return {WatchEventKind::client_back,
          fmt::format("{}: held by a new session {}; session {} ended (expired, or the client closed it)",
                      client_name(now.path), session_text(now.owner), session_text(was->owner))};
}

}  // namespace

std::vector<ClientEvent> client_events(const std::vector<ClientPathRead>& first,
                                       const std::vector<ClientPathRead>& last,
                                       const std::vector<ClientPathRead>& now) {
  std::vector<ClientEvent> events;
  for (const auto& delta : compare_registrations(last, now)) {
    if (delta.change == RegistrationChange::gone)
      events.push_back(
          {WatchEventKind::client_gone, fmt::format("{}: gone (it was held by session {})", client_name(delta.path),
                                                    session_text(delta.before.owner))});
    else if (delta.change == RegistrationChange::renewed) events.push_back(back_event(&delta.before, delta.after));
    else if (delta.change == RegistrationChange::added)
      events.push_back(back_event(held_at(first, delta.path), delta.after));
  }
  return events;
}

std::vector<Finding> unread_client_findings(const std::vector<ClientPathRead>& reads) {
  std::vector<Finding> findings;
  for (const auto& read : reads)
    if (!compared(read))
      findings.push_back(make_finding(FindingCode::clients_unread, "",
                                      fmt::format("{} could not be read: {}; its registrations were not compared",
                                                  read.path, to_string(read.error))));
  return findings;
}

std::optional<long long> controller_broker(const std::string& data) {
  auto json = nlohmann::json::parse(data, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("brokerid") || !json["brokerid"].is_number_integer())
    return std::nullopt;
  return json["brokerid"].get<long long>();
}

std::optional<Finding> clients_on_server(const std::vector<ClientPathRead>& reads, const ConsFacts& cons,
                                         const std::string& server) {
  std::vector<std::string> held;
  for (const auto& read : reads)
    for (const auto& registration : read.held) {
      auto connection = std::ranges::find(cons.connections, registration.owner, &ClientConnection::session);
      if (connection != cons.connections.end())
        held.push_back(fmt::format("{} with session {} (timeout {})", client_name(registration.path),
                                   session_text(registration.owner), format_duration(connection->timeout)));
    }
  if (held.empty()) return std::nullopt;
  return make_finding(FindingCode::clients_on_server, server,
                      fmt::format("{}, about to restart, holds the sessions of {}: each must reach another server "
                                  "within its timeout, or it expires",
                                  server, fmt::join(held, ", ")));
}

bool about_clients(const Finding& finding) {
  using enum FindingCode;
  return finding.code == client_session_lost || finding.code == client_gone || finding.code == controller_moved ||
         finding.code == clients_unread || finding.code == clients_on_server || finding.code == clients_moved ||
         finding.code == ephemerals_fell || finding.code == election_outlasts_timeouts;
}

std::string client_short_name(const std::string& path) {
  if (path.starts_with(kBrokerIds) && path.size() > kBrokerIds.size())
    return "broker " + path.substr(kBrokerIds.size());
  if (path == kController) return "controller";
  return path;
}

std::string client_name(const std::string& path) {
  if (path.starts_with(kBrokerIds) && path.size() > kBrokerIds.size())
    return fmt::format("Kafka broker {} ({})", path.substr(kBrokerIds.size()), path);
  if (path == kController) return "Kafka's controller (/controller)";
  return path;
}

}  // namespace zkverify
