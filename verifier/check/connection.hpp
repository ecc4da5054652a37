#pragma once
// How zkverify reaches the servers: the credentials its sessions present, and TLS.

#include <chrono>
#include <optional>
#include <string>

namespace zkverify::verifier {

struct ConnectionOptions {
  std::optional<std::string> auth_file;           // --auth-file: digest credentials for every session
  std::optional<std::string> sasl_user;           // --sasl-user: SASL DIGEST-MD5 for every session
  std::optional<std::string> sasl_password_file;  // --sasl-password-file: its password
  std::optional<std::string> sasl_mechanism;      // --sasl-mechanism: DIGEST-MD5 (default) or GSSAPI
  std::optional<std::string> sasl_keytab;         // --sasl-keytab: GSSAPI's client keytab
  std::optional<std::string> sasl_service;        // --sasl-service: the servers' service name (zookeeper)
  std::optional<std::string> sasl_host;           // --sasl-host: the servers' host in their principal
  std::optional<std::string> tls_ca;              // --tls-ca: TLS for every connection to the servers
  std::optional<std::string> tls_cert;            // --tls-cert: zkverify's client certificate
  std::optional<std::string> tls_key;             // --tls-key: its private key
  bool tls_no_hostname_check = false;             // --tls-no-hostname-check
  std::chrono::milliseconds tls_expiry_warning{std::chrono::hours(24 * 14)};  // --tls-expiry-warning
};

// Whether zkverify's sessions authenticate by Kerberos (GSSAPI).
inline bool uses_kerberos(const ConnectionOptions& connection) {
  return connection.sasl_mechanism ? *connection.sasl_mechanism == "GSSAPI" : connection.sasl_keytab.has_value();
}

}  // namespace zkverify::verifier
