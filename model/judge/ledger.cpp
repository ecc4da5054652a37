#include "model/judge/ledger.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zkverify {

using Json = nlohmann::json;

namespace {

Json optional_json(const auto& value) { return value ? Json(*value) : Json(nullptr); }

Zxid zxid_from(const Json& value, const char* field) {
  if (!value.is_string()) throw BadInput(fmt::format("'{}' is not a hex zxid string", field));
  auto text = value.get<std::string>();
  std::size_t used = 0;
  std::uint64_t parsed = 0;
  try {
    parsed = std::stoull(text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!text.starts_with("0x") || used != text.size())
    throw BadInput(fmt::format("'{}' is '{}', not a hex zxid like 0x100000003", field, text));
  return Zxid{parsed};
}

// A whole number: nlohmann converts a float such as 1e300 to an integer type undefinedly.
std::int64_t integer_from(const Json& value, const char* field) {
  if (!value.is_number_integer()) throw BadInput(fmt::format("'{}' is not a whole number", field));
  return value.get<std::int64_t>();
}

const Json& field(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end()) throw BadInput(fmt::format("missing field '{}'", name));
  return *it;
}

Json clients_json(const std::vector<ClientPathRead>& clients) {
  Json out = Json::array();
  for (const auto& read : clients) {
    Json held = Json::array();
    for (const auto& registration : read.held)
      held.push_back({{"path", registration.path},
                      {"owner", session_text(registration.owner)},
                      {"ctime_ms", registration.ctime_ms},
                      {"data", registration.data}});
    out.push_back({{"path", read.path}, {"data", read.data}, {"held", std::move(held)}});
  }
  return out;
}

std::vector<ClientPathRead> clients_from(const Json& in) {
  std::vector<ClientPathRead> clients;
  for (const auto& path : in) {
    ClientPathRead read{
        field(path, "path").get<std::string>(), ZkError::ok, {}, field(path, "data").get<std::string>()};
    for (const auto& held : field(path, "held"))
      read.held.push_back({field(held, "path").get<std::string>(),
                           static_cast<std::int64_t>(zxid_from(field(held, "owner"), "clients.held.owner").value),
                           integer_from(field(held, "ctime_ms"), "clients.held.ctime_ms"),
                           field(held, "data").get<std::string>()});
    clients.push_back(std::move(read));
  }
  return clients;
}

}  // namespace

std::string marker_path(const std::string& namespace_path) { return namespace_path + "/marker"; }

Json to_json(const Ledger& ledger) {
  Json servers = Json::object();
  for (const auto& [name, server] : ledger.servers)
    servers[name] = {{"id", optional_json(server.id)},
                     {"high_zxid", zxid_hex(server.high_zxid)},
                     {"high_epoch", server.high_zxid.epoch()},
                     {"node_count", optional_json(server.node_count)},
                     {"mode", server.mode},
                     {"last_seen", server.last_seen}};
  Json marker = nullptr;
  if (ledger.marker)
    marker = {
        {"path", ledger.marker->path}, {"czxid", zxid_hex(ledger.marker->czxid)}, {"content", ledger.marker->content}};
  Json data_loss = nullptr;
  if (ledger.data_loss) data_loss = {{"detected", ledger.data_loss->detected}, {"message", ledger.data_loss->message}};
  Json in_flight = Json::object();
  for (const auto& [name, approval] : ledger.in_flight)
    in_flight[name] = {{"approved", approval.approved},
                       {"seen_down", approval.seen_down},
                       {"received", approval.received ? Json(*approval.received) : Json(nullptr)}};
  return {
      {"format", kLedgerFormat},
      {"updated", ledger.updated},
      {"high_zxid", zxid_hex(ledger.high_zxid)},
      {"high_epoch", ledger.high_zxid.epoch()},
      {"node_count", optional_json(ledger.node_count)},
      {"leader", optional_json(ledger.leader)},
      {"membership", ledger.membership},
      {"marker", std::move(marker)},
      {"data_loss", std::move(data_loss)},
      {"servers", std::move(servers)},
      {"restarted_this_round", ledger.restarted},
      {"restarts_in_flight", std::move(in_flight)},
      {"clients", clients_json(ledger.clients)},
      {"last_election", ledger.last_election ? Json{{"leaderless_ms", ledger.last_election->leaderless_ms},
                                                    {"during", ledger.last_election->during},
                                                    {"at", ledger.last_election->at}}
                                             : Json(nullptr)},
  };
}

Ledger ledger_from_json(const Json& in) {
  if (!in.is_object()) throw BadInput("not a JSON object");
  if (field(in, "format") != kLedgerFormat)
    throw BadInput(fmt::format("format is {}, expected \"{}\"", field(in, "format").dump(), kLedgerFormat));
  Ledger ledger;
  try {
    ledger.updated = field(in, "updated").get<std::string>();
    ledger.high_zxid = zxid_from(field(in, "high_zxid"), "high_zxid");
    if (const auto& count = field(in, "node_count"); !count.is_null())
      ledger.node_count = integer_from(count, "node_count");
    if (const auto& leader = field(in, "leader"); !leader.is_null()) ledger.leader = leader.get<std::string>();
    ledger.membership = field(in, "membership").get<std::vector<std::string>>();
    if (const auto& marker = field(in, "marker"); !marker.is_null())
      ledger.marker =
          Marker{field(marker, "path").get<std::string>(), zxid_from(field(marker, "czxid"), "marker.czxid"),
                 field(marker, "content").get<std::string>()};
    if (const auto& loss = field(in, "data_loss"); !loss.is_null())
      ledger.data_loss =
          DataLoss{field(loss, "detected").get<std::string>(), field(loss, "message").get<std::string>()};
    for (const auto& [name, server] : field(in, "servers").items()) {
      LedgerServer entry;
      if (const auto& id = field(server, "id"); !id.is_null())
        entry.id = static_cast<int>(integer_from(id, "servers.id"));
      entry.high_zxid = zxid_from(field(server, "high_zxid"), "servers.high_zxid");
      if (const auto& count = field(server, "node_count"); !count.is_null())
        entry.node_count = integer_from(count, "servers.node_count");
      entry.mode = field(server, "mode").get<std::string>();
      entry.last_seen = field(server, "last_seen").get<std::string>();
      ledger.servers[name] = std::move(entry);
    }
    ledger.restarted = field(in, "restarted_this_round").get<std::set<std::string>>();
    if (in.contains("restarts_in_flight"))  // absent in ledgers written before it existed
      for (const auto& [name, approval] : in.at("restarts_in_flight").items())
        ledger.in_flight[name] =
            Approval{field(approval, "approved").get<std::string>(), field(approval, "seen_down").get<bool>(),
                     approval.value("received", Json()).is_null()
                         ? std::nullopt
                         : std::optional(integer_from(approval.at("received"), "received"))};
    if (in.contains("clients")) ledger.clients = clients_from(in.at("clients"));  // absent before --clients
    if (const auto& last = in.value("last_election", Json()); !last.is_null())    // absent in older ledgers
      ledger.last_election = Election{integer_from(field(last, "leaderless_ms"), "last_election.leaderless_ms"),
                                      field(last, "during").get<std::string>(), field(last, "at").get<std::string>()};
  } catch (const Json::exception& error) {
    throw BadInput(fmt::format("a field has the wrong type: {}", error.what()));
  }
  return ledger;
}

std::string describe_forgotten(const Ledger& ledger) {
  std::string text = fmt::format("high zxid {} (epoch {}), {} servers", zxid_hex(ledger.high_zxid),
                                 ledger.high_zxid.epoch(), ledger.servers.size());
  if (ledger.marker) text += fmt::format(", marker {} (czxid {})", ledger.marker->path, zxid_hex(ledger.marker->czxid));
  if (ledger.data_loss) text += fmt::format(", the data-loss alarm raised at {}", ledger.data_loss->detected);
  if (!ledger.restarted.empty()) text += fmt::format(", restart round [{}]", fmt::join(ledger.restarted, " "));
  for (const auto& [name, approval] : ledger.in_flight)
    text += fmt::format(", the restart of {} approved at {}", name, approval.approved);
  return text + fmt::format(" (last updated {})", ledger.updated);
}

}  // namespace zkverify
