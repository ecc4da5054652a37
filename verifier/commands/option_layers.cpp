#include "verifier/commands/option_layers.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/failure.hpp"
#include "verifier/commands/command_words.hpp"
#include "verifier/store/config_file.hpp"

namespace zkverify::verifier {
namespace {

bool is_flag(const CLI::Option& option) { return option.get_type_size_max() == 0 || option.get_expected_max() == 0; }

// The options a configuration or the environment may set: named, not --help nor --config, and not
// the deprecated ones (configurable(false): step's --timeout would bound a whole step).
std::vector<CLI::Option*> layered_options(CLI::App& command) {
  std::vector<CLI::Option*> options;
  for (auto* option : command.get_options([](CLI::Option* each) {
         return !each->get_lnames().empty() && each->get_configurable() && each->get_lnames().front() != "help" &&
                each->get_lnames().front() != "config";
       }))
    options.push_back(option);
  return options;
}

std::vector<CLI::App*> listed_commands(CLI::App& app) {
  return app.get_subcommands([](const CLI::App* command) { return !command->get_group().empty(); });
}

CLI::Option* find_option(CLI::App& command, const std::string& key) {
  for (auto* option : layered_options(command))
    if (option->get_lnames().front() == key) return option;
  return nullptr;
}

// true or false, as people write a switch in the environment or a file; none for anything else.
std::optional<bool> switch_value(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return std::nullopt;
}

// The long names typed before a bare "--" (the words after it are COMMAND's).
std::set<std::string> typed_names(const std::vector<std::string>& words) {
  std::set<std::string> names;
  for (std::size_t i = 1; i < words.size() && words[i] != "--"; ++i)
    if (words[i].starts_with("--")) names.insert(words[i].substr(2, words[i].find('=') - 2));
  return names;
}

std::optional<std::string> option_value(const std::vector<std::string>& words, const std::string& flag) {
  for (std::size_t i = 1; i < words.size() && words[i] != "--"; ++i) {
    if (words[i] == flag && i + 1 < words.size()) return words[i + 1];
    if (words[i].starts_with(flag + "=")) return words[i].substr(flag.size() + 1);
  }
  return std::nullopt;
}

// Throws unless every setting of `config` is one that some command of `app` takes where it stands.
void check_config(CLI::App& app, const ConfigFile& config) {
  std::vector<std::string> commands;
  for (auto* command : listed_commands(app)) commands.push_back(command->get_name());
  for (const auto& setting : config.settings) {
    auto where = config.where(setting);
    if (setting.section.empty()) {
      if (std::ranges::find(ensemble_keys(), setting.key) != ensemble_keys().end()) continue;
      std::vector<std::string> takers;
      for (auto* command : listed_commands(app))
        if (find_option(*command, setting.key)) takers.push_back("[" + command->get_name() + "]");
      if (!takers.empty())
        throw BadInput(
            fmt::format("{}: '{}' is not one of the ensemble's keys ({}): put it under the command it is "
                        "for: {}",
                        where, setting.key, fmt::join(ensemble_keys(), ", "), fmt::join(takers, ", ")));
      throw BadInput(
          fmt::format("{}: unknown key '{}'{}", where, setting.key, did_you_mean(setting.key, ensemble_keys())));
    }
    auto* command = find_command(app, setting.section);
    if (!command || command->get_group().empty())
      throw BadInput(fmt::format("{}: unknown section [{}]: sections are commands ({}){}", where, setting.section,
                                 fmt::join(commands, ", "), did_you_mean(setting.section, commands)));
    if (find_option(*command, setting.key)) continue;
    if (command->get_option_no_throw("--" + setting.key))
      throw BadInput(
          fmt::format("{}: --{} is typed on the command line only: from a file or a variable it would "
                      "act on every run",
                      where, setting.key));
    std::vector<std::string> keys;
    for (auto* option : layered_options(*command)) keys.push_back(option->get_lnames().front());
    throw BadInput(fmt::format("{}: {} has no option --{}{}", where, setting.section, setting.key,
                               did_you_mean(setting.key, keys)));
  }
}

std::optional<ConfigFile> chosen_config(const std::vector<std::string>& words, const Environment& environment) {
  auto path = option_value(words, "--config");
  if (!path) path = environment("ZKVERIFY_CONFIG");
  if (!path || path->empty()) return std::nullopt;
  return read_config_file(*path);
}

// The layer's say for `option`, if it has one: the environment's, else the configuration's.
std::optional<LayeredValue> layer_value(CLI::Option& option, const std::string& command, const Environment& environment,
                                        const std::optional<ConfigFile>& config) {
  const auto& key = option.get_lnames().front();
  auto variable = environment_name(key);
  if (auto value = environment(variable); value && !value->empty()) return LayeredValue{&option, *value, variable};
  if (!config) return std::nullopt;
  const ConfigSetting* found = nullptr;
  for (const auto& setting : config->settings)
    if (setting.key == key && (setting.section == command || (setting.section.empty() && !found))) found = &setting;
  if (!found) return std::nullopt;
  return LayeredValue{&option, fmt::format("{}", fmt::join(found->values, ",")), config->where(*found)};
}

}  // namespace

std::string environment_name(std::string_view long_name) {
  std::string name = "ZKVERIFY_";
  for (char c : long_name) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

const std::vector<std::string>& ensemble_keys() {
  static const std::vector<std::string> keys{"servers",
                                             "zoo-cfg",
                                             "auth-file",
                                             "sasl-user",
                                             "sasl-password-file",
                                             "sasl-mechanism",
                                             "sasl-keytab",
                                             "sasl-service",
                                             "sasl-host",
                                             "tls-ca",
                                             "tls-cert",
                                             "tls-key",
                                             "tls-no-hostname-check",
                                             "tls-expiry-warning",
                                             "admin-port",
                                             "namespace",
                                             "ensemble",
                                             "state"};
  return keys;
}

void add_config_options(CLI::App& app) {
  for (auto* command : app.get_subcommands({}))
    command
        ->add_option("--config",
                     "A file of settings (TOML): the ensemble's at its top level, a command's under "
                     "[COMMAND]; flags and ZKVERIFY_* variables win over it")
        ->type_name("FILE")
        ->configurable(false);
}

LayeredWords add_layered_options(CLI::App& app, std::vector<std::string> words, const Environment& environment) {
  LayeredWords result;
  auto* command = words.empty() ? nullptr : find_command(app, words.front());
  if (!command) return {std::move(words), {}};
  auto config = chosen_config(words, environment);
  if (config) check_config(app, *config);
  auto chosen = typed_names(words);
  auto excluded = [&](const CLI::Option& option) {
    return std::ranges::any_of(option.get_excludes(),
                               [&](const CLI::Option* other) { return chosen.contains(other->get_lnames().front()); });
  };
  std::vector<std::string> added;
  for (auto* option : layered_options(*command)) {
    const auto& key = option->get_lnames().front();
    if (chosen.contains(key) || excluded(*option)) continue;
    auto layer = layer_value(*option, command->get_name(), environment, config);
    if (!layer) continue;
    chosen.insert(key);
    if (!is_flag(*option)) {
      added.push_back(fmt::format("--{}={}", key, layer->value));
    } else if (auto on = switch_value(layer->value)) {
      if (*on) added.push_back("--" + key);
    } else {
      throw BadInput(
          fmt::format("{}: --{} is a switch: '{}' is neither true nor false", layer->source, key, layer->value));
    }
    result.layered.push_back(std::move(*layer));
  }
  words.insert(words.begin() + 1, added.begin(), added.end());
  result.words = std::move(words);
  return result;
}

std::string with_layer_named(const std::string& what, const LayeredWords& layers) {
  for (const auto& layer : layers.layered) {
    if (is_flag(*layer.option)) continue;
    try {
      layer.option->clear();
      layer.option->add_result(layer.value);
      layer.option->run_callback();
    } catch (const std::exception& again) {  // BadInput from ours, CLI11's ConversionError from its own
      if (again.what() == what) return fmt::format("{} (from {})", what, layer.source);
    }
  }
  return what;
}

std::string EnvironmentFormatter::make_option_desc(const CLI::Option* option) const {
  auto description = CLI::Formatter::make_option_desc(option);
  if (option->get_lnames().empty()) return description;
  const auto& name = option->get_lnames().front();
  if (name == "help" || (!option->get_configurable() && name != "config")) return description;
  return fmt::format("{} (env {})", description, environment_name(name));
}

}  // namespace zkverify::verifier
