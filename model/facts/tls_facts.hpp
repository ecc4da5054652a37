#pragma once
// What TLS told about a server: its certificate as the handshake presented it, and why a handshake
// failed, in words an operator acts on. Facts only: whether an expiry is near is the judge's call.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zkverify {

// Why a TLS connection to a server failed (none: it did not, or it was plain TCP).
enum class TlsFailure {
  none,
  unknown_ca,            // the chain does not lead to a CA of --tls-ca
  expired,               // the server's certificate (or one in its chain) is past its not-after
  not_yet_valid,         // ... before its not-before
  name_mismatch,         // valid, but for other names than the host in --servers
  client_cert_required,  // the server wants a client certificate and none was given
  client_cert_rejected,  // the server refused the one given (its CA unknown to the server, expired...)
  handshake_stalled,     // connected, but the handshake did not end within the deadline
  port_speaks_tls,       // a plain client met a TLS port
  port_speaks_plain,     // a TLS client met a plain port
  other,                 // the TLS library's own words say what
};

// A short stable name ("unknown_ca").
std::string_view to_string(TlsFailure failure);

// A certificate as the handshake presented it (the server's), or as a PEM file holds it (zkverify's own).
struct CertificateFacts {
  std::string subject;  // RFC 2253, "CN=pzoo-0,O=lab"
  std::string issuer;
  std::chrono::system_clock::time_point not_before{};
  std::chrono::system_clock::time_point not_after{};
  std::vector<std::string> names;  // its subjectAltName DNS names and IP addresses, in order
};

// Whole days from `now` to the certificate's not-after (negative once it has expired).
long long days_left(const CertificateFacts& certificate, std::chrono::system_clock::time_point now);

}  // namespace zkverify
