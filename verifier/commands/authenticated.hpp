#pragma once
// A command's connections as its options say: sessions with --auth-file's credentials, and TLS
// (--tls-*) for the sessions and the probes. Every command that talks to servers wraps its Context in
// one of these first thing in run().

#include <memory>
#include <optional>
#include <string>

#include "probes/keeper.hpp"
#include "probes/relay.hpp"
#include "verifier/check/connection.hpp"
#include "verifier/commands/command.hpp"

namespace zkverify::verifier {

// `given`'s context whose factory gives every session the credentials of --auth-file (read now: a
// usage error when it is unreadable or malformed, a warning on err when others may read it) and,
// with --tls-ca or --sasl-user, carries it through relays: over TLS (the PEM files read now: a usage
// error naming a bad one), authenticated by SASL (the password file read now, as the auth file).
class AuthenticatedContext {
 public:
  AuthenticatedContext(const ConnectionOptions& connection, const Context& given);
  AuthenticatedContext(const AuthenticatedContext&) = delete;
  AuthenticatedContext& operator=(const AuthenticatedContext&) = delete;
  [[nodiscard]] const Context& context() const { return context_; }

 private:
  probes::CredentialedFactory credentialed_;
  std::shared_ptr<probes::TlsSource> tls_;
  std::unique_ptr<probes::RelayKeeperFactory> relayed_;
  Context context_;
};

}  // namespace zkverify::verifier
