#pragma once
// The end of each --help: examples of the uses zkverify exists for, and the exit codes. One place,
// so that the man pages (help2man's EXAMPLES and EXIT STATUS, from these) and --help agree.

#include <string>
#include <string_view>

namespace zkverify::verifier {

// "Examples:" and "Exit status:" paragraphs for `zkverify COMMAND --help`; "" for an unknown name.
std::string command_footer(std::string_view command);
// The same for `zkverify --help`: the five-minute loop of a rolling restart.
std::string top_level_footer();

}  // namespace zkverify::verifier
