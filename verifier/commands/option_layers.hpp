#pragma once
// Where an option's value comes from: the command line, else the environment (ZKVERIFY_<OPTION>),
// else --config FILE (the command's [section], else the file's top level), else its default. The
// layers' values become words that CLI11 parses as if typed, so one parser checks every value.

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "verifier/check/context.hpp"

namespace zkverify::verifier {

// An option's value that was not typed: what the layer said, and where it said it.
struct LayeredValue {
  CLI::Option* option = nullptr;
  std::string value;   // "true" for a flag
  std::string source;  // "ZKVERIFY_TIMEOUT" or "FILE:LINE"
};

struct LayeredWords {
  std::vector<std::string> words;     // argv less the program, with the layers' options after the command
  std::vector<LayeredValue> layered;  // the options added, in the order added
};

// "ZKVERIFY_" and the long name in capitals with '-' as '_': zoo-cfg -> ZKVERIFY_ZOO_CFG.
std::string environment_name(std::string_view long_name);

// The keys the top level of a configuration may hold: the ensemble's, the same to every command.
const std::vector<std::string>& ensemble_keys();

// Adds --config FILE to each of `app`'s commands (its options must be added by now).
void add_config_options(CLI::App& app);

// `words` (argv less the program; words[0] the command) with the options that were not typed, nor
// excluded by one that was, from the environment, else from the configuration (--config FILE, else
// $ZKVERIFY_CONFIG). The whole configuration is checked against `app`'s commands. Throws BadInput
// naming the variable, or the file and line, of what is wrong.
LayeredWords add_layered_options(CLI::App& app, std::vector<std::string> words, const Environment& environment);

// The message of a value that did not parse (`what`), with where the value came from when a layer
// gave it: the option whose value fails again alone with the same message.
std::string with_layer_named(const std::string& what, const LayeredWords& layers);

// Help that names each option's variable after its description: "... (env ZKVERIFY_SERVERS)".
class EnvironmentFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* option) const override;
};

}  // namespace zkverify::verifier
