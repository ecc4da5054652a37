#include "verifier/commands/authenticated.hpp"

#include "model/facts/failure.hpp"
#include "verifier/store/credentials_file.hpp"

namespace zkverify::verifier {

namespace {

std::optional<Credentials> credentials_of(const std::optional<std::string>& auth_file, std::ostream& err) {
  if (!auth_file) return std::nullopt;
  return read_credentials_file(*auth_file, err);
}

std::shared_ptr<probes::TlsSource> tls_source_of(const ConnectionOptions& connection) {
  if (!connection.tls_ca) return nullptr;
  return std::make_shared<probes::TlsSource>(probes::TlsSettings{
      *connection.tls_ca, connection.tls_cert, connection.tls_key, !connection.tls_no_hostname_check});
}

std::optional<SaslSettings> sasl_of(const ConnectionOptions& connection, std::ostream& err) {
  if (!connection.sasl_user) return std::nullopt;
  if (connection.sasl_user->empty()) throw_usage("--sasl-user: the user is empty");
  SaslSettings sasl;
  sasl.user = *connection.sasl_user;
  sasl.password = read_password_file(connection.sasl_password_file.value_or(""), err);
  return sasl;
}

// Relays where the C client cannot go alone: TLS, SASL.
std::unique_ptr<probes::RelayKeeperFactory> relays_of(const ConnectionOptions& connection,
                                                      const std::shared_ptr<probes::TlsSource>& tls,
                                                      probes::KeeperFactory& inner, const Context& given) {
  probes::RelaySettings settings;
  if (tls) settings.tls = [tls] { return tls->current(); };
  settings.sasl = sasl_of(connection, given.err);
  if (!settings.tls && !settings.sasl) return nullptr;
  return std::make_unique<probes::RelayKeeperFactory>(inner, given.executor, std::move(settings));
}

}  // namespace

AuthenticatedContext::AuthenticatedContext(const ConnectionOptions& connection, const Context& given)
    : credentialed_(given.keepers, credentials_of(connection.auth_file, given.err)),
      tls_(tls_source_of(connection)),
      relayed_(relays_of(connection, tls_, credentialed_, given)),
      context_{given.executor,
               relayed_ ? static_cast<probes::KeeperFactory&>(*relayed_) : credentialed_,
               given.out,
               given.err,
               given.environment,
               tls_,
               connection.tls_expiry_warning,
               given.output} {}

}  // namespace zkverify::verifier
