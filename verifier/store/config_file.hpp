#pragma once
// --config FILE: settings for any command in one file, TOML as CLI11 reads it. The top level holds
// what describes the ensemble (keys that mean the same to every command); a [COMMAND] section holds
// settings of that command alone.

#include <string>
#include <string_view>
#include <vector>

namespace zkverify::verifier {

struct ConfigSetting {
  std::string section;              // "" for the top level, else a command's name
  std::string key;                  // an option's long name without "--"; zoo_cfg is read as zoo-cfg
  std::vector<std::string> values;  // one value, or an array's
  int line = 0;                     // where the key stands, from 1
};

struct ConfigFile {
  std::string path;
  std::vector<ConfigSetting> settings;
  // "PATH:LINE", for messages about `setting`.
  [[nodiscard]] std::string where(const ConfigSetting& setting) const;
};

// The settings of `text`, the contents of `path` (named in errors). Throws BadInput "PATH:LINE: why"
// for a section more than one level deep and for a key set twice.
ConfigFile parse_config(std::string_view text, const std::string& path);

// Reads and parses the file at `path`; throws BadInput naming --config and the file when it cannot.
ConfigFile read_config_file(const std::string& path);

}  // namespace zkverify::verifier
