#include "verifier/commands/exit_codes.hpp"

#include <ostream>
#include <stdexcept>

namespace zkverify::verifier {

int exit_code(Verdict verdict) {
  switch (verdict) {
    case Verdict::healthy: return kExitHealthy;
    case Verdict::degraded: return kExitDegraded;
    case Verdict::critical: return kExitCritical;
  }
  return kExitCritical;
}

int exit_code(Failure failure) {
  switch (failure) {
    case Failure::usage:
    case Failure::state_unreadable: return kExitUsage;
    case Failure::state_unwritable: return kExitIoError;
  }
  return kExitInternal;
}

int exit_code_for(const std::exception_ptr& error, std::string_view command, std::ostream& err) {
  auto say = [&](std::string_view prefix, std::string_view what, std::string_view suffix) {
    err << "zkverify" << (command.empty() ? "" : " ") << command << ": " << prefix << what << suffix << "\n";
  };
  try {
    std::rethrow_exception(error);
  } catch (const Error& failure) {
    say("", failure.what(), "");
    return exit_code(static_cast<Failure>(failure.code().value()));
  } catch (const BadInput& bad_value) {
    say("", bad_value.what(), "");
    return kExitUsage;
  } catch (const std::exception& bug) {
    say("internal error: ", bug.what(), "; the ensemble was not verified");
    return kExitInternal;
  } catch (...) {
    say("internal error", "", "; the ensemble was not verified");
    return kExitInternal;
  }
}

int run_guarded(std::string_view command, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (...) {
    return exit_code_for(std::current_exception(), command, err);
  }
}

}  // namespace zkverify::verifier
