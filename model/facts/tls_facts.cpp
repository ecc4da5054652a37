#include "model/facts/tls_facts.hpp"

namespace zkverify {

std::string_view to_string(TlsFailure failure) {
  switch (failure) {
    case TlsFailure::none: return "none";
    case TlsFailure::unknown_ca: return "unknown_ca";
    case TlsFailure::expired: return "expired";
    case TlsFailure::not_yet_valid: return "not_yet_valid";
    case TlsFailure::name_mismatch: return "name_mismatch";
    case TlsFailure::client_cert_required: return "client_cert_required";
    case TlsFailure::client_cert_rejected: return "client_cert_rejected";
    case TlsFailure::handshake_stalled: return "handshake_stalled";
    case TlsFailure::port_speaks_tls: return "port_speaks_tls";
    case TlsFailure::port_speaks_plain: return "port_speaks_plain";
    case TlsFailure::other: return "other";
  }
  return "other";
}

long long days_left(const CertificateFacts& certificate, std::chrono::system_clock::time_point now) {
  // Floor, not truncation: a certificate that expired an hour ago has -1 days left, not 0.
  return std::chrono::floor<std::chrono::days>(certificate.not_after - now).count();
}

}  // namespace zkverify
