#pragma once
// The one place where outcomes become the process's exit code.
//   0 healthy · 1 degraded (or "not safe", "not done") · 2 critical
//   64 usage (sysexits' EX_USAGE): a bad flag, list, duration or state file; nothing was checked
//   74 I/O (EX_IOERR): the state file could not be written; the previous one stands
//   70 internal (EX_SOFTWARE): a bug; the ensemble was not verified

#include <exception>
#include <functional>
#include <iosfwd>
#include <string_view>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"
#include "model/judge/report.hpp"

namespace zkverify::verifier {

inline constexpr int kExitHealthy = 0;
inline constexpr int kExitDegraded = 1;
inline constexpr int kExitCritical = 2;
inline constexpr int kExitUsage = 64;
inline constexpr int kExitInternal = 70;
inline constexpr int kExitIoError = 74;

int exit_code(Verdict verdict);
int exit_code(Failure failure);

// The exit code of an exception's kind (zkverify::Error by its Failure; BadInput, a value that did
// not parse, is a usage error; anything else, std::invalid_argument from a library included, is
// internal: a bug), after one line on `err`: "zkverify COMMAND: what went wrong".
int exit_code_for(const std::exception_ptr& error, std::string_view command, std::ostream& err);

// Runs `body` and returns its exit code, or exit_code_for what it threw. No command catches on its own.
int run_guarded(std::string_view command, std::ostream& err, const std::function<int()>& body);

}  // namespace zkverify::verifier
