#include "verifier/commands/command_words.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace zkverify::verifier {
namespace {

// Edit distance with transpositions ("tiemout" is one swap from "timeout").
std::size_t typo_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The long names ("--servers") and short ones ("-h") of a command's options, and whether each takes a value.
struct OptionName {
  std::string spelling;
  bool takes_value = false;
};

std::vector<OptionName> option_names(const CLI::App& command) {
  std::vector<OptionName> names;
  for (const auto* option : command.get_options()) {
    if (option->get_positional()) continue;
    bool takes_value = option->get_items_expected_max() > 0;  // a flag expects none
    for (const auto& name : option->get_lnames()) names.push_back({"--" + name, takes_value});
    for (const auto& name : option->get_snames()) names.push_back({"-" + name, takes_value});
  }
  return names;
}

bool takes_command_after_dashes(const CLI::App& command) {
  auto positionals = command.get_options([](const CLI::Option* option) { return option->get_positional(); });
  return std::ranges::any_of(positionals, [](const CLI::Option* option) { return option->get_name() == "COMMAND"; });
}

}  // namespace

std::optional<std::string> closest_word(std::string_view typed, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(1, std::min<std::size_t>(2, typed.size() / 3)) + 1;
  for (const auto& word : known) {
    auto distance = typo_distance(typed, word);
    if (distance < best_distance) best = word, best_distance = distance;
  }
  if (best) return best;
  auto starts = std::ranges::count_if(known, [&](const std::string& word) { return word.starts_with(typed); });
  if (typed.size() >= 3 && starts == 1)
    return *std::ranges::find_if(known, [&](const std::string& word) { return word.starts_with(typed); });
  return std::nullopt;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  auto closest = closest_word(typed, known);
  return closest ? fmt::format(" (did you mean {}?)", *closest) : "";
}

std::optional<std::string> first_unknown_word(const CLI::App& command, std::span<const std::string> words) {
  auto names = option_names(command);
  std::vector<std::string> spellings;
  for (const auto& name : names) spellings.push_back(name.spelling);
  bool command_after_dashes = takes_command_after_dashes(command);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (word == "--") return std::nullopt;  // the rest is COMMAND's, or positionals
    if (word.size() > 1 && word.front() == '-') {
      auto spelling = word.substr(0, word.find('='));
      if (!word.starts_with("--")) spelling = word.substr(0, 2);  // -h, or -hVALUE
      auto found = std::ranges::find(names, spelling, &OptionName::spelling);
      if (found == names.end()) return fmt::format("unknown option {}{}", spelling, did_you_mean(spelling, spellings));
      bool value_attached = spelling.size() < word.size();
      if (found->takes_value && !value_attached) ++i;  // its value, whatever it looks like
      continue;
    }
    if (command_after_dashes)
      return fmt::format("put COMMAND after --: zkverify {} ... -- {} ...", command.get_name(), word);
  }
  return std::nullopt;
}

}  // namespace zkverify::verifier
