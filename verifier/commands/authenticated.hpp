#pragma once
// A command's sessions with its --auth-file's credentials: every command that opens sessions wraps
// its Context in one of these first thing in run().

#include <optional>
#include <string>

#include "probes/keeper.hpp"
#include "verifier/commands/command.hpp"

namespace zkverify::verifier {

// `given`'s context whose factory gives every session the credentials of `auth_file` (read now: a
// usage error when it is unreadable or malformed, a warning on err when others may read it).
class AuthenticatedContext {
 public:
  AuthenticatedContext(const std::optional<std::string>& auth_file, const Context& given);
  AuthenticatedContext(const AuthenticatedContext&) = delete;
  AuthenticatedContext& operator=(const AuthenticatedContext&) = delete;
  [[nodiscard]] const Context& context() const { return context_; }

 private:
  probes::CredentialedFactory keepers_;
  Context context_;
};

}  // namespace zkverify::verifier
