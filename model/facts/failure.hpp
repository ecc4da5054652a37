#pragma once
// Why a command as a whole could not do its job (bad input, the state file), as an std::error_code
// category; verifier/commands/exit_codes maps each Failure to the process's exit code, in one place.

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace zkverify {

enum class Failure : int {
  usage = 1,         // a bad flag, list, duration, name, namespace: nothing was checked
  state_unreadable,  // the --state file is unreadable, corrupt or locked
  state_unwritable,  // the --state file could not be written; the previous one stands
};

std::string_view to_string(Failure failure);
const std::error_category& failure_category();
std::error_code make_error_code(Failure failure);

// Thrown when a command cannot do its job; what() names what was wrong, code() says which failure.
class Error : public std::runtime_error {
 public:
  Error(Failure failure, const std::string& message) : std::runtime_error(message), code_(make_error_code(failure)) {}
  [[nodiscard]] const std::error_code& code() const noexcept { return code_; }

 private:
  std::error_code code_;
};

// Thrown by the parsers of what a user gives (flags, the server list, the ledger and credentials
// files): what() says what is wrong, and never quotes a secret. Exit 64 (exit_codes), or the
// failure of the file it came from once the store has named the file.
class BadInput : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

[[noreturn]] inline void throw_usage(const std::string& message) { throw Error(Failure::usage, message); }

}  // namespace zkverify

template <>
struct std::is_error_code_enum<zkverify::Failure> : std::true_type {};
