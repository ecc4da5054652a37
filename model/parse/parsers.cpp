#include "model/parse/parsers.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/facts/text.hpp"

namespace zkverify {
namespace {

constexpr std::string_view kNotServing = "This ZooKeeper instance is not currently serving requests";
constexpr std::string_view kNotWhitelisted = "is not executed because it is not in the whitelist.";

// Calls fn(line) for each line, without the line terminator.
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

template <class Int>
bool to_int(std::string_view text, Int& out, int base = 10) {
  text = trim(text);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

// The refusal forms every four-letter word shares. Returns true (and sets the error) when `reply` is one.
// A four-letter word's answer that is no answer: refused, or no byte before the server closed.
template <class Facts>
bool is_refusal(std::string_view reply, Reply<Facts>& out) {
  if (reply.empty()) {
    out.error = ProbeError::malformed;
    out.detail = std::string(kClosedWithoutReply);
    return true;
  }
  auto text = trim(reply);
  if (text == kNotServing) {
    out.error = ProbeError::not_serving;
    return true;
  }
  if (text.ends_with(kNotWhitelisted) && text.find('\n') == std::string_view::npos) {
    out.error = ProbeError::not_whitelisted;
    return true;
  }
  return false;
}

template <class Facts>
Reply<Facts> malformed(std::string what, std::string_view reply) {
  Reply<Facts> out;
  out.error = ProbeError::malformed;
  out.detail = fmt::format("{} (reply: \"{}\")", what, excerpt(reply));
  return out;
}

template <class Facts>
Reply<Facts> facts(Facts value) {
  return Reply<Facts>{ProbeError::ok, std::move(value), {}};
}

std::string_view after_prefix(std::string_view line, std::string_view prefix) {
  return line.starts_with(prefix) ? trim(line.substr(prefix.size())) : std::string_view{};
}

}  // namespace

Mode parse_mode(std::string_view text) {
  text = trim(text);
  if (text == "leader") return Mode::leader;
  if (text == "follower") return Mode::follower;
  if (text == "observer") return Mode::observer;
  if (text == "standalone") return Mode::standalone;
  if (text == "read-only" || text == "read_only") return Mode::read_only;
  return Mode::unknown;
}

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::leader: return "leader";
    case Mode::follower: return "follower";
    case Mode::observer: return "observer";
    case Mode::standalone: return "standalone";
    case Mode::read_only: return "read-only";
    case Mode::unknown: break;
  }
  return "unknown";
}

Reply<SrvrFacts> parse_srvr(std::string_view reply) {
  Reply<SrvrFacts> out;
  if (is_refusal(reply, out)) return out;
  if (!reply.starts_with("Zookeeper version:")) return malformed<SrvrFacts>("not srvr output", reply);

  SrvrFacts srvr;
  bool have_zxid = false, have_mode = false;
  std::string problem;
  for_each_line(reply, [&](std::string_view line) {
    if (auto v = after_prefix(line, "Zookeeper version:"); !v.empty()) srvr.version = std::string(v);
    else if (auto z = after_prefix(line, "Zxid:"); !z.empty()) {
      have_zxid = z.starts_with("0x") && to_int(z.substr(2), srvr.zxid.value, 16);
      if (!have_zxid) problem = fmt::format("bad Zxid '{}'", excerpt(z));
    } else if (auto m = after_prefix(line, "Mode:"); !m.empty()) {
      srvr.mode = parse_mode(m);
      have_mode = srvr.mode != Mode::unknown;
      if (!have_mode) problem = fmt::format("unknown Mode '{}'", excerpt(m));
    } else if (auto n = after_prefix(line, "Node count:"); !n.empty()) {
      to_int(n, srvr.node_count);
    } else if (auto c = after_prefix(line, "Connections:"); !c.empty()) {
      to_int(c, srvr.connections);
    } else if (auto o = after_prefix(line, "Outstanding:"); !o.empty()) {
      to_int(o, srvr.outstanding);
    } else if (auto r = after_prefix(line, "Received:"); !r.empty()) {
      std::int64_t received = 0;
      if (to_int(r, received)) srvr.received = received;
    }
  });
  if (!problem.empty()) return malformed<SrvrFacts>("srvr: " + problem, reply);
  if (!have_zxid) return malformed<SrvrFacts>("srvr output without a Zxid line", reply);
  if (!have_mode) return malformed<SrvrFacts>("srvr output without a Mode line", reply);
  return facts(std::move(srvr));
}

Reply<MntrFacts> parse_mntr(std::string_view reply) {
  Reply<MntrFacts> out;
  if (is_refusal(reply, out)) return out;
  MntrFacts mntr;
  std::map<std::string_view, std::optional<std::int64_t>*> numbers{
      {"zk_znode_count", &mntr.znode_count},
      {"zk_synced_followers", &mntr.synced_followers},
      {"zk_synced_non_voting_followers", &mntr.synced_non_voting_followers},
      {"zk_learners", &mntr.learners},
      {"zk_quorum_size", &mntr.quorum_size},
      {"zk_ephemerals_count", &mntr.ephemerals},
      {"zk_num_alive_connections", &mntr.alive_connections},
  };
  bool any = false;
  for_each_line(reply, [&](std::string_view line) {
    auto tab = line.find('\t');
    if (tab == std::string_view::npos || !line.starts_with("zk_")) return;
    any = true;
    auto key = line.substr(0, tab);
    auto value = trim(line.substr(tab + 1));
    if (key == "zk_server_state") mntr.server_state = std::string(value);
    else if (auto it = numbers.find(key); it != numbers.end()) {
      std::int64_t n = 0;
      if (to_int(value, n)) *it->second = n;
    }
  });
  if (!any || mntr.server_state.empty()) return malformed<MntrFacts>("not mntr output (no zk_server_state)", reply);
  return facts(std::move(mntr));
}

bool parse_member_line(std::string_view line, Member& member) {
  if (!line.starts_with("server.")) return false;
  auto eq = line.find('=');
  if (eq == std::string_view::npos || !to_int(line.substr(7, eq - 7), member.id)) return false;
  auto value = line.substr(eq + 1);
  std::string_view client;
  if (auto semi = value.find(';'); semi != std::string_view::npos) {
    client = value.substr(semi + 1);
    value = value.substr(0, semi);
  }
  // host:quorumPort:electionPort[:role]; the host may be a bracketed IPv6 address.
  std::size_t host_end = value.starts_with('[') ? value.find(']') : 0;
  if (host_end == std::string_view::npos) return false;
  auto first = value.find(':', host_end);
  if (first == std::string_view::npos) return false;
  auto second = value.find(':', first + 1);
  if (second == std::string_view::npos) return false;
  auto third = value.find(':', second + 1);
  member.quorum_address = std::string(value.substr(0, second));
  member.election_address =
      std::string(value.substr(0, first + 1)) + std::string(value.substr(second + 1, third - second - 1));
  member.role = third == std::string_view::npos ? "participant" : std::string(value.substr(third + 1));
  member.client_address = std::string(client);
  return true;
}

Reply<ConfFacts> parse_conf(std::string_view reply) {
  Reply<ConfFacts> out;
  if (is_refusal(reply, out)) return out;
  ConfFacts conf;
  bool any_key = false;
  std::string problem;
  for_each_line(reply, [&](std::string_view line) {
    if (line.starts_with("server.")) {
      Member member;
      if (parse_member_line(line, member)) conf.members.push_back(std::move(member));
      else problem = fmt::format("bad membership line '{}'", excerpt(line));
      return;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) return;
    any_key = true;
    auto key = line.substr(0, eq);
    auto value = line.substr(eq + 1);
    if (key == "serverId") {
      int id = 0;
      if (to_int(value, id)) conf.server_id = id;
    } else if (key == "version") {
      std::int64_t version = 0;
      if (to_int(value, version, 16)) conf.config_version = version;
    }
  });
  if (!problem.empty()) return malformed<ConfFacts>("conf: " + problem, reply);
  if (!any_key || !reply.starts_with("clientPort=")) return malformed<ConfFacts>("not conf output", reply);
  std::ranges::sort(conf.members, {}, &Member::id);
  return facts(std::move(conf));
}

Reply<IsroFacts> parse_isro(std::string_view reply) {
  Reply<IsroFacts> out;
  if (is_refusal(reply, out)) return out;
  auto text = trim(reply);
  if (text == "rw") return facts(IsroFacts{false});
  if (text == "ro") return facts(IsroFacts{true});
  if (text == "null") {
    out.error = ProbeError::not_serving;
    return out;
  }
  return malformed<IsroFacts>("not isro output (expected rw, ro or null)", reply);
}

Reply<RuokFacts> parse_ruok(std::string_view reply) {
  Reply<RuokFacts> out;
  if (is_refusal(reply, out)) return out;
  if (trim(reply) == "imok") return facts(RuokFacts{true});
  return malformed<RuokFacts>("not ruok output (expected imok)", reply);
}

namespace {

// The value of `key` ("sid=") in a cons line's parenthesised list, up to the next ',' or ')'.
std::string_view cons_field(std::string_view line, std::string_view key) {
  for (auto at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    if (at == 0 || (line[at - 1] != '(' && line[at - 1] != ',')) continue;  // "sid=" not inside "xsid="
    auto value = line.substr(at + key.size());
    return value.substr(0, value.find_first_of(",)"));
  }
  return {};
}

}  // namespace

Reply<ConsFacts> parse_cons(std::string_view reply) {
  Reply<ConsFacts> out;
  if (is_refusal(reply, out)) return out;
  ConsFacts cons;
  bool malformed_line = false;
  for_each_line(reply, [&](std::string_view line) {
    line = trim(line);
    if (line.empty()) return;
    if (line.front() != '/' || line.find('[') == std::string_view::npos) {
      malformed_line = true;
      return;
    }
    auto sid = cons_field(line, "sid=");
    if (sid.empty()) return;
    ClientConnection connection{std::string(line.substr(1, line.find('[') - 1)), 0, {}};
    std::uint64_t session = 0;
    long long timeout = 0;
    if (!sid.starts_with("0x") || !to_int(sid.substr(2), session, 16) || !to_int(cons_field(line, "to="), timeout)) {
      malformed_line = true;
      return;
    }
    connection.session = static_cast<std::int64_t>(session);
    connection.timeout = std::chrono::milliseconds(timeout);
    cons.connections.push_back(std::move(connection));
  });
  if (malformed_line) return malformed<ConsFacts>("not cons output (expected /HOST:PORT[N](...) lines)", reply);
  return facts(std::move(cons));
}

namespace {

// Parses an AdminServer reply into JSON and handles its "error" field; returns nullopt and fills
// `out` when the reply is a refusal or malformed.
template <class Facts>
std::optional<nlohmann::json> admin_json(std::string_view body, std::string_view command, Reply<Facts>& out) {
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    out = malformed<Facts>(fmt::format("AdminServer {}: not a JSON object", command), body);
    return std::nullopt;
  }
  if (auto error = json.find("error"); error != json.end() && error->is_string()) {
    if (error->get<std::string>() == kNotServing) out.error = ProbeError::not_serving;
    else out = malformed<Facts>(fmt::format("AdminServer {} error: {}", command, error->get<std::string>()), body);
    return std::nullopt;
  }
  return json;
}

std::optional<std::int64_t> optional_int(const nlohmann::json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

// The string at `key`, or `otherwise` when it is absent or no string (json::value would throw).
std::string string_or(const nlohmann::json& json, const char* key, const char* otherwise) {
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string(otherwise);
}

}  // namespace

Reply<MntrFacts> parse_admin_monitor(std::string_view body) {
  Reply<MntrFacts> out;
  auto json = admin_json(body, "monitor", out);
  if (!json) return out;
  auto state = json->find("server_state");
  if (state == json->end() || !state->is_string())
    return malformed<MntrFacts>("AdminServer monitor without server_state", body);
  MntrFacts mntr;
  mntr.server_state = state->get<std::string>();
  mntr.znode_count = optional_int(*json, "znode_count");
  mntr.synced_followers = optional_int(*json, "synced_followers");
  mntr.synced_non_voting_followers = optional_int(*json, "synced_non_voting_followers");
  mntr.learners = optional_int(*json, "learners");
  mntr.quorum_size = optional_int(*json, "quorum_size");
  mntr.ephemerals = optional_int(*json, "ephemerals_count");
  mntr.alive_connections = optional_int(*json, "num_alive_connections");
  return facts(std::move(mntr));
}

Reply<ConsFacts> parse_admin_connections(std::string_view body) {
  Reply<ConsFacts> out;
  auto json = admin_json(body, "connections", out);
  if (!json) return out;
  auto plain = json->find("connections");
  if (plain == json->end() || !plain->is_array())
    return malformed<ConsFacts>("AdminServer connections without a connections list", body);
  ConsFacts cons;
  auto secure = json->find("secure_connections");
  for (const auto* list : {&*plain, secure != json->end() && secure->is_array() ? &*secure : nullptr}) {
    if (!list) continue;
    for (const auto& item : *list) {
      auto session = item.is_object() ? optional_int(item, "session_id") : std::nullopt;
      if (!session || *session == 0) continue;  // still handshaking: no session yet
      cons.connections.push_back({string_or(item, "remote_socket_address", ""), *session,
                                  std::chrono::milliseconds(optional_int(item, "session_timeout").value_or(0))});
    }
  }
  return facts(std::move(cons));
}

Reply<ConfFacts> parse_admin_conf(std::string_view body) {
  Reply<ConfFacts> out;
  auto json = admin_json(body, "configuration", out);
  if (!json) return out;
  auto id = optional_int(*json, "server_id");
  if (!id) return malformed<ConfFacts>("AdminServer configuration without server_id", body);
  ConfFacts conf;
  conf.server_id = static_cast<int>(*id);
  conf.voters_only = true;  // the AdminServer's members, when added, come from voting_view
  return facts(std::move(conf));
}

Reply<ConfFacts> parse_admin_voting_view(std::string_view body) {
  Reply<ConfFacts> out;
  auto json = admin_json(body, "voting_view", out);
  if (!json) return out;
  auto config = json->find("current_config");
  if (config == json->end() || !config->is_object())
    return malformed<ConfFacts>("AdminServer voting_view without current_config", body);
  ConfFacts conf;
  for (auto& item : config->items()) {
    // Named, not a structured binding: clang 14 cannot capture a structured binding in a lambda.
    const auto& key = item.key();
    const auto& value = item.value();
    Member member;
    auto first_of = [&value](const char* field) {
      auto it = value.find(field);
      return it != value.end() && it->is_array() && !it->empty() && (*it)[0].is_string() ? (*it)[0].get<std::string>()
                                                                                         : std::string{};
    };
    if (!to_int(key, member.id) || !value.is_object())
      return malformed<ConfFacts>(fmt::format("AdminServer voting_view: bad member '{}'", key), body);
    member.quorum_address = first_of("server_addresses");
    member.election_address = first_of("election_addresses");
    member.role = string_or(value, "learner_type", "participant");
    member.client_address = string_or(value, "client_address", "");
    conf.members.push_back(std::move(member));
  }
  std::ranges::sort(conf.members, {}, &Member::id);
  conf.voters_only = true;
  return facts(std::move(conf));
}

}  // namespace zkverify
