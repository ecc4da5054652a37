#include "verifier/commands/authenticated.hpp"

#include "verifier/store/credentials_file.hpp"

namespace zkverify::verifier {

namespace {

std::optional<Credentials> credentials_of(const std::optional<std::string>& auth_file, std::ostream& err) {
  if (!auth_file) return std::nullopt;
  return read_credentials_file(*auth_file, err);
}

}  // namespace

AuthenticatedContext::AuthenticatedContext(const std::optional<std::string>& auth_file, const Context& given)
    : keepers_(given.keepers, credentials_of(auth_file, given.err)),
      context_{given.executor, keepers_, given.out, given.err} {}

}  // namespace zkverify::verifier
