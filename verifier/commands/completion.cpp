// `zkverify completion bash|zsh|fish`: prints a completion script written from the command line's
// own definitions (every subcommand, its options, which take a value, its positionals), so the
// completion cannot drift from the options as one scraped from --help could. Hidden from --help:
// deploy/package/gen-docs.sh runs it at build time and the package installs the scripts.

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/facts/failure.hpp"
#include "verifier/commands/command.hpp"
#include "verifier/commands/exit_codes.hpp"

namespace zkverify::verifier {

namespace {

// What a value completes to. `other`: the shell's default (files), as for a DURATION or a PORT.
enum class ValueKind { other, file, server, words };

struct ValueCompletion {
  ValueKind kind = ValueKind::other;
  std::string words;  // for `words`: the values, separated by spaces
};

// The values completion knows more about than the shell does, by option name (a positional by its
// name). A new option whose value is a file, a server name or one of a few words is one line here.
const std::map<std::string, ValueCompletion, std::less<>>& value_completions() {
  static const std::map<std::string, ValueCompletion, std::less<>> table = {
      {"--output", {ValueKind::words, "text json"}},
      {"--restart", {ValueKind::server, ""}},
      {"--local", {ValueKind::server, ""}},
      {"NAME", {ValueKind::server, ""}},  // safe-to-restart's positional
      {"--state", {ValueKind::file, ""}},
      {"--junit", {ValueKind::file, ""}},
      {"--report", {ValueKind::file, ""}},
      {"--auth-file", {ValueKind::file, ""}},
      {"--sasl-password-file", {ValueKind::file, ""}},
      {"--sasl-keytab", {ValueKind::file, ""}},
      {"--sasl-mechanism", {ValueKind::words, "DIGEST-MD5 GSSAPI"}},
      {"--sasl-service", {ValueKind::words, "zookeeper"}},
      {"--config", {ValueKind::file, ""}},
  };
  return table;
}

ValueCompletion value_of(const std::string& name) {
  auto known = value_completions().find(name);
  return known == value_completions().end() ? ValueCompletion{} : known->second;
}

// One option as the scripts need it: its spellings ("-h", "--help"), help, and value if it takes one.
struct OptionSpec {
  std::vector<std::string> names;
  std::string help;
  bool takes_value = false;
  ValueCompletion value;
};

struct PositionalSpec {
  std::string name;
  std::string help;
  bool many = false;  // takes every word left (step's and roll's COMMAND, safe-to-restart's NAME...)
  ValueCompletion value;
};

struct CommandSpec {
  std::string name;  // empty for zkverify itself
  std::string help;
  std::vector<OptionSpec> options;
  std::vector<PositionalSpec> positionals;
};

// The first line of a help text: descriptions are shown one per line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

CommandSpec spec_of(const CLI::App& app, std::string command_name) {
  CommandSpec spec{std::move(command_name), first_line(app.get_description()), {}, {}};
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional() && !option->nonpositional()) {
      auto positional = option->get_name(true);
      spec.positionals.push_back({positional, first_line(option->get_description()),
                                  option->get_items_expected_max() > 1, value_of(positional)});
      continue;
    }
    OptionSpec flag;
    for (const auto& name : option->get_snames()) flag.names.push_back("-" + name);
    for (const auto& name : option->get_lnames()) flag.names.push_back("--" + name);
    flag.help = first_line(option->get_description());
    // A flag (add_flag) expects no value: CLI11 sets its expected count, not its type size, to 0.
    flag.takes_value = option->get_type_size_max() > 0 && option->get_expected_max() > 0;
    for (const auto& name : flag.names)
      if (flag.takes_value && flag.value.kind == ValueKind::other) flag.value = value_of(name);
    spec.options.push_back(std::move(flag));
  }
  return spec;
}

// zkverify and every subcommand --help lists (a hidden one, this one included, has no group).
std::vector<CommandSpec> specs_of(const CLI::App& root) {
  std::vector<CommandSpec> specs{spec_of(root, "")};
  for (const CLI::App* sub : root.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    specs.push_back(spec_of(*sub, sub->get_name()));
  return specs;
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string joined;
  for (const auto& word : words) joined += (joined.empty() ? "" : separator) + word;
  return joined;
}

// `text` inside '...' in any of the three shells' syntax (fish's '\' escapes too).
std::string single_quoted(const std::string& text, bool fish) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += fish ? "\\'" : "'\\''";
    else if (c == '\\' && fish) quoted += "\\\\";
    else quoted += c;
  }
  return quoted + "'";
}

std::vector<std::string> valued_names(const CommandSpec& spec) {
  std::vector<std::string> names;
  for (const auto& option : spec.options)
    if (option.takes_value) names.insert(names.end(), option.names.begin(), option.names.end());
  return names;
}

// Each script's helpers are fixed text; only the commands' tables are written from the specs. Words
// come from COMP_LINE (COMP_WORDS is split at = and :, which every --servers value has).
const char* const kBashHead =
    R"bash(# bash completion for zkverify. Generated by `zkverify completion bash`: do not edit.

# The server names in the --servers value on the line: NAME of NAME=host:port, else host:port.
_zkverify_servers() {
  local i list='' entry
  local -a entries
  for ((i = 1; i < ${#words[@]}; i++)); do
    case ${words[i]} in
      --servers) list=${words[i + 1]-} ;;
      --servers=*) list=${words[i]#--servers=} ;;
    esac
  done
  IFS=, read -ra entries <<<"$list"
  for entry in "${entries[@]}"; do printf '%s\n' "${entry%%=*}"; done
}

# After --, COMMAND's words: the first a command (unless a path), the others bash's default (files).
_zkverify_command() {
  if (($1 == 0)) && [[ $cur != */* ]]; then mapfile -t COMPREPLY < <(compgen -c -- "$cur"); fi
}

# bash replaces only what follows the last COMP_WORDBREAKS character of the word (= and : by
# default, both in every --servers value): the replies must start there.
_zkverify_trim() {
  local i
  for ((i = ${#cur} - 1; i >= 0; i--)); do
    if [[ $COMP_WORDBREAKS == *"${cur:i:1}"* ]]; then
      COMPREPLY=("${COMPREPLY[@]#"${cur:0:i+1}"}")
      return
    fi
  done
}
)bash";

void write_bash_values(std::ostream& out, const std::vector<CommandSpec>& specs) {
  std::map<std::string, std::vector<std::string>> by_action;  // the case arm's action -> names
  for (const auto& spec : specs) {
    auto add = [&](const std::string& name, const ValueCompletion& value) {
      std::string action;
      if (value.kind == ValueKind::words)
        action = fmt::format("compgen -W {} -- \"$2\"", single_quoted(value.words, false));
      if (value.kind == ValueKind::server) action = "compgen -W \"$(_zkverify_servers)\" -- \"$2\"";
      auto& names = by_action[action];
      if (!action.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (const auto& option : spec.options)
      for (const auto& name : option.names)
        if (option.takes_value) add(name, option.value);
    for (const auto& positional : spec.positionals) add(positional.name, positional.value);
  }
  out << "\n# The replies for a value of option (or positional) $1 that starts with $2. None: bash's\n"
         "# default (files), as for a FILE, a DURATION or a PORT.\n"
         "_zkverify_value() {\n  case $1 in\n";
  for (const auto& [action, names] : by_action)
    if (!action.empty())
      out << fmt::format("    {}) compopt +o default 2>/dev/null; mapfile -t COMPREPLY < <({}) ;;\n", join(names, "|"),
                         action);
  out << "  esac\n}\n";
}

void write_bash_main(std::ostream& out, const std::vector<CommandSpec>& specs) {
  out << R"(
_zkverify() {
  # The words from COMP_LINE split at blanks: COMP_WORDS is also split at = and :.
  # words: those before the one completed, cur.
  local line=${COMP_LINE:0:COMP_POINT} cur='' sub='' i opts valued='' positional=''
  local -a words
  read -ra words <<<"$line"
  if [[ $line != *[[:blank:]] ]] && ((${#words[@]})); then cur=${words[-1]}; unset 'words[-1]'; fi
  ((${#words[@]})) || return 0
  COMPREPLY=()
  # The subcommand is the first word that is not an option (zkverify's own take no value).
  for ((i = 1; i < ${#words[@]}; i++)); do
    if [[ ${words[i]} == -- ]]; then _zkverify_command $((${#words[@]} - i - 1)); return 0; fi
    [[ -n $sub || ${words[i]} == -* ]] || sub=${words[i]}
  done
  case $sub in
)";
  for (const auto& spec : specs) {
    std::vector<std::string> words;
    for (const auto& option : spec.options) words.insert(words.end(), option.names.begin(), option.names.end());
    if (spec.name.empty())
      for (const auto& sub : specs)
        if (!sub.name.empty()) words.push_back(sub.name);
    out << fmt::format("    {}) opts={} valued=' {} '", spec.name.empty() ? "''" : spec.name,
                       single_quoted(join(words, " "), false), join(valued_names(spec), " "));
    if (!spec.positionals.empty()) out << " positional=" << spec.positionals.front().name;
    out << " ;;\n";
  }
  out << R"(    *) return 0 ;;
  esac
  if [[ $cur == --*=* && $valued == *" ${cur%%=*} "* ]]; then
    _zkverify_value "${cur%%=*}" "${cur#*=}"
    COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
  elif [[ $valued == *" ${words[-1]} "* ]]; then
    _zkverify_value "${words[-1]}" "$cur"
  elif [[ $cur == -* || -z $sub ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  elif [[ -n $positional ]]; then
    _zkverify_value "$positional" "$cur"
  fi
  _zkverify_trim
}
complete -o default -F _zkverify zkverify
)";
}

void write_bash(std::ostream& out, const std::vector<CommandSpec>& specs) {
  out << kBashHead;
  write_bash_values(out, specs);
  write_bash_main(out, specs);
}

const char* const kZshHead = R"zsh(#compdef zkverify
# zsh completion for zkverify. Generated by `zkverify completion zsh`: do not edit.

# The server names in the --servers value on the line: NAME of NAME=host:port, else host:port.
_zkverify_servers() {
  local i list= entry expl
  local -a names
  for ((i = 1; i <= $#words; i++)); do
    case ${(Q)words[i]} in
      (--servers) list=${(Q)words[i+1]} ;;
      (--servers=*) list=${${(Q)words[i]}#--servers=} ;;
    esac
  done
  for entry in ${(s:,:)list}; do names+=(${entry%%=*}); done
  _wanted servers expl 'server name' compadd -a names
}

# COMMAND's words, after --: completed as a command line of their own; nothing before.
_zkverify_command() {
  local at=${words[(i)--]}
  ((at < CURRENT)) || return 1
  words=("${(@)words[at+1,-1]}")
  ((CURRENT -= at))
  _normal
}
)zsh";

// `text` inside an _arguments spec's [description] (in '...').
std::string zsh_description(const std::string& text) {
  std::string escaped;
  for (char c : text) escaped += (c == '[' || c == ']') ? std::string("\\") + c : std::string(1, c);
  return escaped;
}

std::string zsh_action(const ValueCompletion& value) {
  switch (value.kind) {
    case ValueKind::file: return "_files";
    case ValueKind::server: return "_zkverify_servers";
    case ValueKind::words: return "(" + value.words + ")";
    case ValueKind::other: break;
  }
  return "_default";
}

// One _arguments spec per spelling, each excluding the option's other spellings.
std::vector<std::string> zsh_specs(const CommandSpec& spec) {
  std::vector<std::string> specs;
  for (const auto& option : spec.options) {
    auto exclusions = option.names.size() > 1 ? "(" + join(option.names, " ") + ")" : std::string();
    for (const auto& name : option.names) {
      auto text = exclusions + name + (option.takes_value && name.starts_with("--") ? "=" : "");
      text += "[" + zsh_description(option.help) + "]";
      if (option.takes_value) text += ": :" + zsh_action(option.value);
      specs.push_back(single_quoted(text, false));
    }
  }
  int index = 0;
  for (const auto& positional : spec.positionals) {
    if (positional.many && positional.name == "COMMAND")  // step's and roll's, after --
      specs.push_back(single_quoted("*:" + positional.name + ":_zkverify_command", false));
    else if (positional.many)  // safe-to-restart's NAME...
      specs.push_back(single_quoted("*:" + positional.name + ":" + zsh_action(positional.value), false));
    else
      specs.push_back(
          single_quoted(fmt::format("{}:{}:{}", ++index, positional.name, zsh_action(positional.value)), false));
  }
  return specs;
}

void write_zsh(std::ostream& out, const std::vector<CommandSpec>& specs) {
  out << kZshHead << R"(
_zkverify() {
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  _arguments -C -S \
)";
  for (const auto& spec : zsh_specs(specs.front())) out << "    " << spec << " \\\n";
  out << "    '1: :->command' '*:: :->args' && ret=0\n"
         "  case $state in\n"
         "    (command)\n"
         "      local -a commands=(\n";
  for (const auto& spec : specs)
    if (!spec.name.empty()) out << "        " << single_quoted(spec.name + ":" + spec.help, false) << "\n";
  out << "      )\n"
         "      _describe -t commands 'zkverify command' commands && ret=0 ;;\n"
         "    (args)\n"
         "      curcontext=${curcontext%:*:*}:zkverify-$line[1]:\n"
         "      case $line[1] in\n";
  for (const auto& spec : specs) {
    if (spec.name.empty()) continue;
    out << "        (" << spec.name << ") _arguments -S";
    for (const auto& arg : zsh_specs(spec)) out << " \\\n            " << arg;
    out << " && ret=0 ;;\n";
  }
  out << "      esac ;;\n"
         "  esac\n"
         "  return ret\n"
         "}\n\n"
         "# Autoloaded from fpath (compinit), complete now; sourced, register with compdef.\n"
         "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then _zkverify \"$@\"; else compdef _zkverify zkverify; "
         "fi\n";
}

const char* const kFishHead =
    R"fish(# fish completion for zkverify. Generated by `zkverify completion fish`: do not edit.

# The subcommand: the first word after zkverify that is not an option (zkverify's own take no value).
function __zkverify_subcommand
    for word in (commandline -opc)[2..-1]
        if not string match -q -- '-*' $word
            echo $word
            return 0
        end
    end
    return 1
end

# True while completing subcommand $argv[1] (no argument: zkverify itself), before any --.
function __zkverify_at
    contains -- -- (commandline -opc); and return 1
    test "$(__zkverify_subcommand)" = "$argv[1]"
end

# After --, COMMAND's words: completed as fish completes a command line.
function __zkverify_after_dashdash
    contains -- -- (commandline -opc)
end

# (--do-complete=: `complete -C` would take a first word "--" for its own.)
function __zkverify_command_line
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words)
    set -l line (string escape -- $words[(math $at + 1)..-1]) (commandline -ct)
    complete --do-complete=(string join ' ' -- $line)
end

# The server names in the --servers value on the line: NAME of NAME=host:port, else host:port.
function __zkverify_servers
    set -l words (commandline -opc) (commandline -ct)
    set -l list
    for i in (seq (count $words))
        switch $words[$i]
            case --servers
                set list $words[(math $i + 1)]
            case '--servers=*'
                set list (string replace -- --servers= '' $words[$i])
        end
    end
    for entry in (string split -n -- , "$list")
        string replace -r -- '=.*' '' $entry
    end
end

complete -c zkverify -n __zkverify_after_dashdash -x -a '(__zkverify_command_line)'
)fish";

// The flags of `complete` for a value: -x (no files) with its words, -F (files), or -r (fish's default).
std::string fish_value(const ValueCompletion& value) {
  switch (value.kind) {
    case ValueKind::file: return " -r -F";
    case ValueKind::server: return " -x -a '(__zkverify_servers)'";
    case ValueKind::words: return " -x -a " + single_quoted(value.words, true);
    case ValueKind::other: break;
  }
  return " -r";
}

std::string fish_positional(const ValueCompletion& value) {
  if (value.kind == ValueKind::server) return " -f -a '(__zkverify_servers)'";
  if (value.kind == ValueKind::words) return " -f -a " + single_quoted(value.words, true);
  return " -F";
}

void write_fish_command(std::ostream& out, const CommandSpec& spec) {
  auto at = "complete -c zkverify -n " +
            single_quoted(spec.name.empty() ? "__zkverify_at" : "__zkverify_at " + spec.name, true);
  if (spec.name.empty()) out << at << " -f  # a subcommand, not a file\n";
  for (const auto& option : spec.options) {
    out << at;
    for (const auto& name : option.names)
      out << (name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1));
    out << (option.takes_value ? fish_value(option.value) : "") << " -d " << single_quoted(option.help, true) << "\n";
  }
  // A positional's values (NAME... too) are offered with the options; COMMAND's after -- only (see above).
  for (const auto& positional : spec.positionals)
    if (positional.name != "COMMAND" && positional.value.kind != ValueKind::other)
      out << at << fish_positional(positional.value) << " -d "
          << single_quoted(positional.help.empty() ? positional.name : positional.help, true) << "\n";
}

void write_fish(std::ostream& out, const std::vector<CommandSpec>& specs) {
  out << kFishHead;
  for (const auto& spec : specs) {
    out << "\n";
    write_fish_command(out, spec);
    if (!spec.name.empty())
      out << "complete -c zkverify -n __zkverify_at -a " << spec.name << " -d " << single_quoted(spec.help, true)
          << "\n";
  }
}

class CompletionCommand final : public Command {
 public:
  std::string_view name() const override { return "completion"; }

  CLI::App& add_to(CLI::App& app) override {
    root_ = &app;  // walked when run: by then every command has added its options
    auto& command = *app.add_subcommand("completion", "Print a completion script: bash, zsh or fish");
    command.group("");  // hidden: the package installs the scripts
    command.add_option("SHELL", shell_, "bash, zsh or fish")->required();
    return command;
  }

  int run(const Context& context) override {
    auto specs = specs_of(*root_);
    if (shell_ == "bash") write_bash(context.out, specs);
    else if (shell_ == "zsh") write_zsh(context.out, specs);
    else if (shell_ == "fish") write_fish(context.out, specs);
    else throw_usage(fmt::format("unknown shell '{}': use bash, zsh or fish", shell_));
    context.out << std::flush;
    return kExitHealthy;
  }

 private:
  const CLI::App* root_ = nullptr;
  std::string shell_;
};

}  // namespace

std::unique_ptr<Command> make_completion_command() { return std::make_unique<CompletionCommand>(); }

}  // namespace zkverify::verifier
