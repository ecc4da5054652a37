// --servers (parse_server_list) and --admin-port (assign_admin_ports): the first line is the list, the
// rest the ports. Only std::invalid_argument may come out; a list written back parses the same.
#include <stdexcept>
#include <string>

#include "fuzz_check.hpp"
#include "model/facts/addresses.hpp"
#include "model/facts/text.hpp"

using namespace zkverify;

namespace {

// The servers as a user would write them: NAME=host:port, or host:port when unnamed.
std::string list_text(const std::vector<ServerAddress>& servers) {
  std::string text;
  for (const auto& server : servers) {
    if (!text.empty()) text += ',';
    text += server.name == server.endpoint() ? server.endpoint() : server.name + "=" + server.endpoint();
  }
  return text;
}

bool padded(const std::string& host) { return host != trim(host); }

void check_round_trip(const std::vector<ServerAddress>& servers) {
  for (const auto& server : servers)
    if (padded(server.host)) return;  // "[ a ]:1": the brackets kept the spaces, writing it back does not
  auto again = parse_server_list(list_text(servers));
  FUZZ_CHECK(again.size() == servers.size());
  for (std::size_t i = 0; i < servers.size(); ++i) {
    FUZZ_CHECK(again[i].name == servers[i].name);
    FUZZ_CHECK(again[i].host == servers[i].host);
    FUZZ_CHECK(again[i].port == servers[i].port);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = fuzz::text_of(data, size);
  auto newline = input.find('\n');
  auto list = input.substr(0, newline);
  std::vector<ServerAddress> servers;
  try {
    servers = parse_server_list(list);
  } catch (const std::invalid_argument& error) {
    FUZZ_CHECK(error.what()[0] != '\0');
    return 0;
  }
  FUZZ_CHECK(!servers.empty());
  for (const auto& server : servers) {
    FUZZ_CHECK(!server.host.empty() && !server.name.empty() && server.port != 0);
    FUZZ_CHECK(server.name.find('/') == std::string::npos);
  }
  check_round_trip(servers);
  if (newline == std::string_view::npos) return 0;
  try {
    assign_admin_ports(servers, input.substr(newline + 1));
    for (const auto& server : servers) FUZZ_CHECK(server.admin_port && *server.admin_port != 0);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
