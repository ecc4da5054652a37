#include "verifier/store/config_file.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "model/facts/failure.hpp"
#include "verifier/store/text_file.hpp"

namespace zkverify::verifier {
namespace {

// A configuration is a few hundred bytes; anything this large is the wrong file.
constexpr std::uintmax_t kMaxConfigSize = 1 << 20;

std::string_view trimmed(std::string_view text) {
  auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::string_view unquoted(std::string_view name) {
  if (name.size() >= 2 && (name.front() == '"' || name.front() == '\'') && name.back() == name.front())
    return name.substr(1, name.size() - 2);
  return name;
}

// The line (from 1) of the `occurrence`th setting of `dotted` ("servers", "serve.listen"), read
// the way CLI11 reads lines; 0 when not found. CLI11's items carry no line numbers.
int line_of(std::string_view text, const std::string& dotted, int occurrence) {
  std::string section;
  int number = 0;
  for (std::size_t at = 0; at <= text.size(); ++number) {
    auto end = std::min(text.find('\n', at), text.size());
    auto line = trimmed(text.substr(at, end - at));
    at = end + 1;
    if (line.size() >= 2 && line.front() == '[' && line.back() == ']') {
      auto name = trimmed(line.substr(1, line.size() - 2));
      if (name.size() >= 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
      section = CLI::detail::to_lower(std::string(name)) == "default" ? "" : std::string(name);
      continue;
    }
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    auto name = unquoted(trimmed(line.substr(0, line.find('='))));
    if ((section.empty() ? std::string(name) : section + "." + std::string(name)) == dotted && occurrence-- == 0)
      return number + 1;
  }
  return 0;
}

std::string key_name(std::string name) {
  std::ranges::replace(name, '_', '-');
  return name;
}

}  // namespace

std::string ConfigFile::where(const ConfigSetting& setting) const { return fmt::format("{}:{}", path, setting.line); }

ConfigFile parse_config(std::string_view text, const std::string& path) {
  std::istringstream in{std::string(text)};
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_config(in);
  } catch (const CLI::Error& error) {
    throw BadInput(fmt::format("--config: '{}' is not TOML as zkverify reads it: {}", path, error.what()));
  }
  ConfigFile file{path, {}};
  for (auto& item : items) {
    if (item.name == "++" || item.name == "--") continue;  // CLI11's marks of a section's start and end
    auto dotted = fmt::format("{}", fmt::join(item.parents, ".")) + (item.parents.empty() ? "" : ".") + item.name;
    ConfigSetting setting{item.parents.empty() ? "" : item.parents.front(), key_name(item.name), std::move(item.inputs),
                          line_of(text, dotted, 0)};
    auto where = file.where(setting);
    if (item.parents.size() > 1)
      throw BadInput(
          fmt::format("{}: [{}]: a section is a command's name, one level deep", where, fmt::join(item.parents, ".")));
    // CLI11 would take the values of both (one after the other) or the last: neither is what was meant.
    if (auto again = line_of(text, dotted, 1))
      throw BadInput(fmt::format("{}:{}: '{}' is set twice{} (first on line {})", path, again, setting.key,
                                 setting.section.empty() ? "" : " in [" + setting.section + "]", setting.line));
    file.settings.push_back(std::move(setting));
  }
  return file;
}

ConfigFile read_config_file(const std::string& path) {
  return parse_config(read_text_file("--config", path, kMaxConfigSize, "a zkverify configuration"), path);
}

}  // namespace zkverify::verifier
