#pragma once
// The words of a command line that zkverify does not take, named before CLI11 parses: CLI11 reports
// a missing --servers before an unknown --server, and a stray word as "not expected" without
// saying what was meant. Here the first unknown word, in the order typed, gets a suggestion.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace zkverify::verifier {

// The word of `known` closest to `typed` (a typo's distance, or `typed` as the start of exactly one
// word); none when nothing is close enough to be what was meant.
std::optional<std::string> closest_word(std::string_view typed, const std::vector<std::string>& known);

// " (did you mean X?)" for the closest word, or "".
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

// The subcommand of `app` named `name`, or nullptr; const when `app` is.
template <typename App>
App* find_command(App& app, const std::string& name) {
  auto found = app.get_subcommands([&](auto* sub) { return sub->get_name() == name; });
  return found.empty() ? nullptr : found.front();
}

// Checks `words` (what follows the command's name) against `command`'s options, up to a bare "--":
// the first unknown option, or a word before "--" where the command takes its COMMAND after it,
// as a usage message; none when CLI11 may parse them.
std::optional<std::string> first_unknown_word(const CLI::App& command, std::span<const std::string> words);

}  // namespace zkverify::verifier
