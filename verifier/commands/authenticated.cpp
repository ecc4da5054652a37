#include "verifier/commands/authenticated.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

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

// GSSAPI's credentials come from MIT Kerberos's environment: the client keytab and a ticket cache
// in this process's memory (nothing left behind in /tmp). Set before the first session opens, while
// no thread of this process reads the environment.
void use_kerberos_environment(const ConnectionOptions& connection) {
  if (connection.sasl_keytab) {
    if (::access(connection.sasl_keytab->c_str(), R_OK) != 0)
      throw_usage(fmt::format("--sasl-keytab '{}': cannot read it: {}", *connection.sasl_keytab,
                              std::generic_category().message(errno)));
    // NOLINTNEXTLINE(concurrency-mt-unsafe): before the first session; no thread reads the environment yet
    ::setenv("KRB5_CLIENT_KTNAME", connection.sasl_keytab->c_str(), 1);
    ::setenv("KRB5CCNAME", "MEMORY:zkverify", 0);  // NOLINT(concurrency-mt-unsafe): as above
  }
}

// The servers' names as their principals spell them, where they do not follow the Java client's
// defaults (zookeeper/HOST; zookeeper.sasl.client.username and zookeeper.server.principal there).
SaslSettings with_names(const ConnectionOptions& connection, SaslSettings sasl) {
  if (connection.sasl_service) {
    if (connection.sasl_service->empty() || connection.sasl_service->find_first_of("/@ ") != std::string::npos)
      throw_usage(fmt::format("--sasl-service '{}': a service name, without '/', '@' or spaces (e.g. zookeeper)",
                              *connection.sasl_service));
    sasl.service = *connection.sasl_service;
  }
  if (connection.sasl_host) {
    if (connection.sasl_host->empty() || connection.sasl_host->find_first_of("/@ ") != std::string::npos)
      throw_usage(fmt::format("--sasl-host '{}': a host name, without '/', '@' or spaces (e.g. zk.example.com)",
                              *connection.sasl_host));
    sasl.host = *connection.sasl_host;
  }
  return sasl;
}

std::optional<SaslSettings> sasl_of(const ConnectionOptions& connection, std::ostream& err) {
  auto mechanism = connection.sasl_mechanism.value_or(connection.sasl_keytab ? "GSSAPI" : "DIGEST-MD5");
  if (mechanism != "DIGEST-MD5" && mechanism != "GSSAPI")
    throw_usage(fmt::format("--sasl-mechanism '{}': DIGEST-MD5 or GSSAPI", mechanism));
  SaslSettings sasl;
  sasl.mechanism = mechanism;
  if (mechanism == "GSSAPI") {
    if (connection.sasl_user || connection.sasl_password_file)
      throw_usage(
          "--sasl-mechanism GSSAPI takes no --sasl-user or --sasl-password-file: the principal and its "
          "keys come from Kerberos (--sasl-keytab, or a ticket cache)");
    use_kerberos_environment(connection);
    sasl.host.clear();  // each server's own: zookeeper/HOST
    return with_names(connection, std::move(sasl));
  }
  if (connection.sasl_keytab) throw_usage("--sasl-keytab is GSSAPI's: give --sasl-mechanism GSSAPI");
  if (!connection.sasl_user) {
    if (connection.sasl_mechanism)
      throw_usage("--sasl-mechanism DIGEST-MD5 needs --sasl-user and --sasl-password-file");
    if (connection.sasl_service || connection.sasl_host)
      throw_usage(
          "--sasl-service and --sasl-host name the servers for SASL: give --sasl-user (DIGEST-MD5) or "
          "--sasl-mechanism GSSAPI too");
    return std::nullopt;
  }
  if (connection.sasl_user->empty()) throw_usage("--sasl-user: the user is empty");
  sasl.user = *connection.sasl_user;
  sasl.password = read_password_file(connection.sasl_password_file.value_or(""), err);
  return with_names(connection, std::move(sasl));
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
