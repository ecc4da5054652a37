// --zoo-cfg's reader (parse_zoo_cfg, then zoo_cfg_servers): any text, as a zoo.cfg and as its own
// dynamic file. Only std::invalid_argument may come out, naming the file; servers read are usable.
#include <set>
#include <stdexcept>
#include <string>

#include "fuzz_check.hpp"
#include "model/parse/zoo_cfg.hpp"

using namespace zkverify;

namespace {

void check_servers(const std::vector<ServerAddress>& servers) {
  FUZZ_CHECK(!servers.empty());
  std::set<std::string> names;
  for (const auto& server : servers) {
    FUZZ_CHECK(!server.host.empty() && server.port != 0 && server.observer.has_value());
    FUZZ_CHECK(!server.name.empty() && server.name.find('/') == std::string::npos);
    FUZZ_CHECK(names.insert(server.name).second);  // names are unique: they key every report row
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::text_of(data, size);
  try {
    auto config = parse_zoo_cfg(text, "zoo.cfg");
    check_servers(zoo_cfg_servers(config, nullptr, "zoo.cfg"));
    check_servers(zoo_cfg_servers(config, &config, "zoo.cfg.dynamic"));
  } catch (const std::invalid_argument& error) {
    FUZZ_CHECK(std::string(error.what()).starts_with("zoo.cfg"));
  }
  return 0;
}
