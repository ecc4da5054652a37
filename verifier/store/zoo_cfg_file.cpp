#include "verifier/store/zoo_cfg_file.hpp"

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "model/facts/errors.hpp"
#include "model/parse/zoo_cfg.hpp"
#include "verifier/store/text_file.hpp"

namespace zkverify::verifier {

namespace {

// A zoo.cfg is a few kilobytes; anything this large is the wrong file.
constexpr std::uintmax_t kMaxZooCfgSize = 1 << 20;

// `option` names the flag that gave the file, in errors.
std::string read_text(std::string_view option, const std::filesystem::path& path) {
  return read_text_file(option, path, kMaxZooCfgSize, "a zoo.cfg");
}

}  // namespace

namespace {

// zoo.cfg at `path`, and its dynamic file when it names one (3.5+ keeps the membership there).
struct ConfigFiles {
  ZooCfg config;
  std::optional<ZooCfg> dynamic;
  std::string membership_file;  // the one that holds the server.N lines
};

ConfigFiles read_config_files(std::string_view option, const std::string& path) {
  std::filesystem::path main_path(path);
  ConfigFiles files{parse_zoo_cfg(read_text(option, main_path), main_path.string()), std::nullopt, main_path.string()};
  if (files.config.dynamic_file.empty()) return files;
  std::filesystem::path dynamic_path(files.config.dynamic_file);
  // ZooKeeper writes the path absolute, as its pod sees it: a copy taken off the pod has it beside.
  if (dynamic_path.is_relative()) dynamic_path = main_path.parent_path() / dynamic_path;
  else if (!std::filesystem::exists(dynamic_path)) dynamic_path = main_path.parent_path() / dynamic_path.filename();
  files.dynamic = parse_zoo_cfg(read_text(option, dynamic_path), dynamic_path.string());
  files.membership_file = dynamic_path.string();
  return files;
}

}  // namespace

std::vector<ServerAddress> read_zoo_cfg_servers(const std::string& path) {
  auto files = read_config_files("--zoo-cfg", path);
  return zoo_cfg_servers(files.config, files.dynamic ? &*files.dynamic : nullptr, files.membership_file);
}

std::vector<Member> read_zoo_cfg_members(const std::string& path) {
  auto files = read_config_files("--zoo-cfg", path);
  auto members = zoo_cfg_members(files.config, files.dynamic ? &*files.dynamic : nullptr);
  if (members.empty())
    throw BadInput(fmt::format("{}: no server.N lines: not an ensemble's configuration", files.membership_file));
  return members;
}

std::map<int, std::string> read_zoo_cfg_voter_names(const std::string& path) {
  auto files = read_config_files("--to", path);
  auto voters = zoo_cfg_voter_names(files.config, files.dynamic ? &*files.dynamic : nullptr);
  if (voters.empty()) throw BadInput(fmt::format("{}: no server.N line names a voter", files.membership_file));
  return voters;
}

std::set<int> read_zoo_cfg_voters(const std::string& path) {
  std::set<int> voters;
  for (const auto& [id, name] : read_zoo_cfg_voter_names(path)) voters.insert(id);
  return voters;
}

}  // namespace zkverify::verifier
