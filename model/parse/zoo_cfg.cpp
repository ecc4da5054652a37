#include "model/parse/zoo_cfg.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/facts/errors.hpp"
#include "model/facts/text.hpp"

namespace zkverify {

namespace {

// Where a line is, for every error: "zoo.cfg:12".
struct Where {
  std::string_view file;
  int line;
  [[nodiscard]] std::string operator()(std::string_view what) const {
    return fmt::format("{}:{}: {}", file, line, what);
  }
};

// "[v6]:rest" or "host:rest": the host (without brackets) and what follows its ':'.
std::pair<std::string_view, std::string_view> host_and_rest(std::string_view text, const Where& where) {
  if (text.starts_with('[')) {
    auto close = text.find(']');
    if (close == std::string_view::npos) throw BadInput(where(fmt::format("'{}' has no ']'", text)));
    auto rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') throw BadInput(where(fmt::format("'{}': ':' expected after ']'", text)));
    return {text.substr(1, close - 1), rest.empty() ? rest : rest.substr(1)};
  }
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return {text, {}};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

// The ";[clientAddress:]clientPort" part of a server line.
void read_client_part(std::string_view client, ZooCfgServer& server, const Where& where) {
  std::string_view host, port = client;
  if (client.starts_with('[') || client.find(':') != std::string_view::npos) {
    std::tie(host, port) = host_and_rest(client, where);
  }
  server.client_port = parse_port(port, where("the client port"));
  if (!host.empty() && host != "0.0.0.0" && host != "::") server.client_host = std::string(host);
}

// One address of a server line, "host:quorumPort:electionPort[:role]".
struct Address {
  std::string_view host;         // without brackets
  std::string quorum, election;  // "host:port" as conf prints them ("[v6]:port")
  std::optional<bool> observer;  // the role, when written
};

Address read_address(int id, std::string_view address, const Where& where) {
  auto [host, rest] = host_and_rest(address, where);
  if (host.empty()) throw BadInput(where(fmt::format("server.{} has no host", id)));
  // Names become parts of znode names and the host a connect string's: no '/', blank or bracket.
  if (host.find_first_of("/[] \t") != std::string_view::npos)
    throw BadInput(where(fmt::format("server.{}: '{}' is not a host name or address", id, host)));
  // What ZooKeeper binds to on that server itself: from anywhere else it names no server.
  if (host == "0.0.0.0" || host == "::")
    throw BadInput(
        where(fmt::format("server.{}'s host is {}: a pod's own copy of zoo.cfg (kubernetes-kafka's init.sh "
                          "writes one); give the ConfigMap's, which names every server",
                          id, host)));
  auto fields = split(rest, ':');
  if (fields.size() < 2 || fields.size() > 3)
    throw BadInput(where(fmt::format("server.{}: '{}' is not host:quorumPort:electionPort[:role]", id, address)));
  parse_port(fields[0], where("the quorum port"));
  parse_port(fields[1], where("the election port"));
  auto bracketed = host.find(':') != std::string_view::npos ? fmt::format("[{}]", host) : std::string(host);
  Address read{host, fmt::format("{}:{}", bracketed, fields[0]), fmt::format("{}:{}", bracketed, fields[1]), {}};
  if (fields.size() == 2) return read;
  std::string role(fields[2]);
  std::ranges::transform(role, role.begin(),
                         [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  if (role != "participant" && role != "observer")
    throw BadInput(where(fmt::format("server.{}: role '{}' is neither participant nor observer", id, fields[2])));
  read.observer = role == "observer";
  return read;
}

// "host:quorumPort:electionPort[:role][;[clientAddress:]clientPort]". 3.6+ may list several
// addresses, "a|b", the role written after the last: the server is reached by the first's host.
ZooCfgServer read_server(int id, std::string_view value, const Where& where) {
  ZooCfgServer server;
  server.id = id;
  server.line = where.line;
  auto parts = split(value, ';');
  if (parts.size() > 2) throw BadInput(where(fmt::format("'{}' has more than one ';'", value)));
  std::optional<bool> role;
  for (auto address : split(parts[0], '|')) {
    auto read = read_address(id, address, where);
    if (server.host.empty()) {
      server.host = std::string(read.host);
      server.quorum_address = std::move(read.quorum);
      server.election_address = std::move(read.election);
    }
    if (read.observer && role && *read.observer != *role)
      throw BadInput(where(fmt::format("server.{}: its addresses give it two roles", id)));
    if (read.observer) role = read.observer;
  }
  server.observer = role.value_or(false);
  if (parts.size() == 2) {
    read_client_part(parts[1], server, where);
    server.client_address = std::string(parts[1]);
  }
  return server;
}

int server_id(std::string_view key, const Where& where) {
  auto digits = key.substr(std::string_view("server.").size());
  int id = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (error != std::errc{} || end != digits.data() + digits.size() || id <= 0)
    throw BadInput(where(fmt::format("'{}' is not server.N with N a positive number", key)));
  return id;
}

// The first label of a host name; "" for an IP address, which names nobody.
std::string first_label(const std::string& host) {
  bool numeric = host.find(':') != std::string::npos ||
                 std::ranges::all_of(host, [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  return numeric ? "" : host.substr(0, host.find('.'));
}

// A properties line as Java reads it: the key ends at the first '=', ':' or blank, and one '=' or ':'
// (blanks around it) separates it from the value. zoo.cfg writes "key=value".
std::pair<std::string_view, std::string_view> key_and_value(std::string_view line) {
  auto end = std::min(line.find_first_of("=: \t"), line.size());
  auto key = line.substr(0, end);
  auto value = trim(line.substr(end));
  if (!value.empty() && (value.front() == '=' || value.front() == ':')) value = trim(value.substr(1));
  return {key, value};
}

}  // namespace

ZooCfg parse_zoo_cfg(std::string_view text, std::string_view file) {
  ZooCfg config;
  std::set<int> ids;
  int number = 0;
  for (auto line : split(text, '\n')) {
    Where where{file, ++number};
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    auto [key, value] = key_and_value(line);
    if (key.starts_with("server.")) {
      auto server = read_server(server_id(key, where), value, where);
      if (!ids.insert(server.id).second) throw BadInput(where(fmt::format("server.{} is listed twice", server.id)));
      config.servers.push_back(std::move(server));
    } else if (key == "clientPort") {
      config.client_port = parse_port(value, where("clientPort"));
    } else if (key == "secureClientPort") {
      config.secure_client_port = true;
    } else if (key == "dynamicConfigFile") {
      config.dynamic_file = std::string(value);
    }
  }
  return config;
}

namespace {

// Its host's first label when no other line's host shares it, else server.N.
std::string server_name(const ZooCfgServer& line, const std::map<std::string, int>& labels) {
  auto label = first_label(line.host);
  return label.empty() || labels.at(label) > 1 ? fmt::format("server.{}", line.id) : label;
}

std::map<std::string, int> label_counts(const std::vector<ZooCfgServer>& lines) {
  std::map<std::string, int> labels;
  for (const auto& line : lines) ++labels[first_label(line.host)];
  return labels;
}

}  // namespace

std::map<int, std::string> zoo_cfg_voter_names(const ZooCfg& config, const ZooCfg* dynamic) {
  const auto& lines = dynamic ? dynamic->servers : config.servers;
  auto labels = label_counts(lines);
  std::map<int, std::string> voters;
  for (const auto& line : lines)
    if (!line.observer) voters[line.id] = server_name(line, labels);
  return voters;
}

std::vector<ServerAddress> zoo_cfg_servers(const ZooCfg& config, const ZooCfg* dynamic, std::string_view file) {
  const auto& lines = dynamic ? dynamic->servers : config.servers;
  if (lines.empty()) throw BadInput(fmt::format("{}: no server.N lines: not an ensemble's configuration", file));
  auto labels = label_counts(lines);
  std::vector<ServerAddress> servers;
  for (const auto& line : lines) {
    Where where{file, line.line};
    auto port = line.client_port ? line.client_port : config.client_port;
    if (!port && config.secure_client_port)
      throw BadInput(
          where(fmt::format("server.{} accepts clients over TLS only (secureClientPort): zkverify does "
                            "not speak TLS",
                            line.id)));
    if (!port)
      throw BadInput(where(fmt::format("server.{} has no client port (no ';PORT' and no clientPort=)", line.id)));
    ServerAddress server;
    if (auto same = std::ranges::find_if(servers,
                                         [&](const ServerAddress& other) {
                                           return other.host == line.client_host.value_or(line.host) &&
                                                  other.port == *port;
                                         });
        same != servers.end())
      throw BadInput(
          where(fmt::format("server.{} is reached at the same host and port as {} (clientPort= for all): "
                            "give each line its ';port', or use --servers",
                            line.id, same->name)));
    server.name = server_name(line, labels);
    server.host = line.client_host.value_or(line.host);
    server.port = *port;
    server.observer = line.observer;
    servers.push_back(std::move(server));
  }
  return servers;
}

std::vector<Member> zoo_cfg_members(const ZooCfg& config, const ZooCfg* dynamic) {
  std::vector<Member> members;
  for (const auto& line : dynamic ? dynamic->servers : config.servers)
    members.push_back({line.id, line.quorum_address, line.election_address, line.observer ? "observer" : "participant",
                       line.client_address});
  std::ranges::sort(members, {}, &Member::id);
  return members;
}

}  // namespace zkverify
