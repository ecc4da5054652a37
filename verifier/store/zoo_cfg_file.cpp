#include "verifier/store/zoo_cfg_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "model/facts/errors.hpp"
#include "model/parse/zoo_cfg.hpp"
#include "verifier/store/text_file.hpp"

namespace zkverify::verifier {

namespace {

// A zoo.cfg is a few kilobytes; anything this large is the wrong file.
constexpr std::uintmax_t kMaxSize = 1 << 20;

std::string read_text(const std::filesystem::path& path) {
  return read_text_file("--zoo-cfg", path, kMaxSize, "a zoo.cfg");
}

}  // namespace

std::vector<ServerAddress> read_zoo_cfg_servers(const std::string& path) {
  std::filesystem::path main_path(path);
  auto config = parse_zoo_cfg(read_text(main_path), main_path.string());
  if (config.dynamic_file.empty()) return zoo_cfg_servers(config, nullptr, main_path.string());
  std::filesystem::path dynamic_path(config.dynamic_file);
  // ZooKeeper writes the path absolute, as its pod sees it: a copy taken off the pod has it beside.
  if (dynamic_path.is_relative()) dynamic_path = main_path.parent_path() / dynamic_path;
  else if (!std::filesystem::exists(dynamic_path)) dynamic_path = main_path.parent_path() / dynamic_path.filename();
  auto dynamic = parse_zoo_cfg(read_text(dynamic_path), dynamic_path.string());
  return zoo_cfg_servers(config, &dynamic, dynamic_path.string());
}

}  // namespace zkverify::verifier
