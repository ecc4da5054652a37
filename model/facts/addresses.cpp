#include "model/facts/addresses.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "model/facts/text.hpp"

namespace zkverify {
namespace {

ServerAddress parse_entry(std::string_view entry) {
  ServerAddress server;
  std::string_view endpoint = entry;
  if (auto eq = entry.find('='); eq != std::string_view::npos) {
    server.name = std::string(trim(entry.substr(0, eq)));
    endpoint = trim(entry.substr(eq + 1));
    if (server.name.empty()) throw BadInput(fmt::format("server entry '{}' has an empty name before '='", entry));
    // Names become parts of znode names (the watch's counters): a '/' would make a path of them.
    if (server.name.find('/') != std::string::npos)
      throw BadInput(fmt::format("server name '{}' has a '/'; use letters, digits, '-' or '.'", server.name));
  }
  // Habits from other tools' connect strings, named instead of failing on their symptoms.
  if (endpoint.find("://") != std::string_view::npos)
    throw BadInput(fmt::format("server entry '{}': no scheme: HOST:PORT", entry));
  if (auto colon = endpoint.rfind(':');
      colon != std::string_view::npos && endpoint.find('/', colon) != std::string_view::npos)
    throw BadInput(fmt::format("server entry '{}': a chroot path is not supported; use --namespace", entry));
  std::string_view host, port;
  if (endpoint.starts_with('[')) {
    auto close = endpoint.find(']');
    if (close == std::string_view::npos || close + 1 >= endpoint.size() || endpoint[close + 1] != ':')
      throw BadInput(fmt::format("server entry '{}' is not [ipv6]:port", entry));
    host = endpoint.substr(1, close - 1);
    port = endpoint.substr(close + 2);
  } else {
    auto colon = endpoint.rfind(':');
    if (colon == std::string_view::npos)
      throw BadInput(fmt::format("server entry '{}' has no port (expected host:port)", entry));
    host = endpoint.substr(0, colon);
    port = endpoint.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      throw BadInput(fmt::format("server entry '{}': write IPv6 addresses as [addr]:port", entry));
  }
  if (host.empty()) throw BadInput(fmt::format("server entry '{}' has an empty host", entry));
  if (host.find_first_of("[]") != std::string_view::npos)
    throw BadInput(fmt::format("server entry '{}' has a '[' or ']' inside its host", entry));
  // An unnamed entry is named by its host: no host name has a '/', and the name must not (above).
  if (host.find('/') != std::string_view::npos)
    throw BadInput(fmt::format("server entry '{}' has a '/' in its host", entry));
  server.host = std::string(host);
  server.port = parse_port(port, fmt::format("server entry '{}'", entry));
  if (server.name.empty()) server.name = std::string(endpoint);
  return server;
}

}  // namespace

std::string ServerAddress::endpoint() const {
  return host.find(':') == std::string::npos ? fmt::format("{}:{}", host, port) : fmt::format("[{}]:{}", host, port);
}

std::uint16_t parse_port(std::string_view text, std::string_view what) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value == 0 || value > 65535)
    throw BadInput(fmt::format("{}: '{}' is not a port (1-65535)", what, text));
  return static_cast<std::uint16_t>(value);
}

std::vector<ServerAddress> parse_server_list(std::string_view list) {
  if (trim(list).empty()) throw BadInput("the server list is empty (expected host:port,host:port,...)");
  std::vector<ServerAddress> servers;
  std::set<std::string> names, endpoints;
  for (auto entry : split(list, ',')) {
    if (entry.find_first_of(" \t\n") != std::string_view::npos)  // "h:1 h:2": spaces are not separators
      throw BadInput(fmt::format("the server list '{}': separate servers with ','", list));
    if (entry.empty()) throw BadInput(fmt::format("the server list '{}' has an empty entry", list));
    auto server = parse_entry(entry);
    if (!names.insert(server.name).second)
      throw BadInput(fmt::format("server name '{}' appears twice in the server list", server.name));
    if (!endpoints.insert(server.endpoint()).second)
      throw BadInput(fmt::format("server {} appears twice in the server list", server.endpoint()));
    servers.push_back(std::move(server));
  }
  return servers;
}

void assign_admin_ports(std::vector<ServerAddress>& servers, std::string_view ports) {
  auto parts = split(ports, ',');
  if (parts.size() != 1 && parts.size() != servers.size())
    throw BadInput(fmt::format("--admin-port takes one port or one per server ({} servers, {} ports given)",
                               servers.size(), parts.size()));
  for (std::size_t i = 0; i < servers.size(); ++i)
    servers[i].admin_port = parse_port(parts.size() == 1 ? parts[0] : parts[i], "--admin-port");
}

ListenAddress parse_listen(std::string_view text) {
  auto fail = [&](std::string_view why) {
    throw BadInput(
        fmt::format("--listen '{}': {} (expected HOST:PORT, e.g. :9181, 0.0.0.0:9181 or [::1]:9181)", text, why));
  };
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) fail("no port");
  auto host = text.substr(0, colon);  // "" (":9181"): every address
  if (host.starts_with('[')) {
    if (host.size() < 3 || host.back() != ']') fail("an IPv6 host needs its closing bracket");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    fail("an IPv6 host goes in brackets");
  }
  if (host.find_first_of("[]") != std::string_view::npos) fail("a '[' or ']' inside the host");
  auto port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
    fail("the port must be a number from 0 to 65535");
  return {std::string(host), static_cast<std::uint16_t>(port)};
}

std::string server_label(std::string_view name, std::string_view address) {
  return name == address ? std::string(name) : fmt::format("{} ({})", name, address);
}

}  // namespace zkverify
