#include "verifier/commands/authenticated.hpp"

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

}  // namespace

AuthenticatedContext::AuthenticatedContext(const ConnectionOptions& connection, const Context& given)
    : credentialed_(given.keepers, credentials_of(connection.auth_file, given.err)),
      tls_(tls_source_of(connection)),
      relayed_(tls_ ? std::make_unique<probes::TlsKeeperFactory>(credentialed_, given.executor,
                                                                 [tls = tls_] { return tls->current(); })
                    : nullptr),
      context_{given.executor,
               relayed_ ? static_cast<probes::KeeperFactory&>(*relayed_) : credentialed_,
               given.out,
               given.err,
               given.environment,
               tls_,
               connection.tls_expiry_warning,
               given.output} {}

}  // namespace zkverify::verifier
