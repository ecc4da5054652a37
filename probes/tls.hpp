#pragma once
// TLS to the servers: one OpenSSL client context built from PEM files (as Kubernetes Secrets and
// cert-manager mount them), the verification of each handshake (chain, then the server's name as
// --servers lists it), and the reasons a handshake failed, in words. Used by the four-letter words,
// the AdminServer over HTTPS and the sessions' relay alike.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/verify_context.hpp>
#include <boost/system/error_code.hpp>

#include "model/facts/tls_facts.hpp"

namespace zkverify::probes {

struct TlsSettings {
  std::string ca_file;                   // trusted CAs, PEM: turns TLS on
  std::optional<std::string> cert_file;  // zkverify's client certificate (chain), PEM
  std::optional<std::string> key_file;   // its private key, PEM: never printed
  bool check_hostname = true;            // false: the chain only (zookeeper.ssl.hostnameVerification=false)
};

// The files' identity as stat() sees them through symlinks (device, inode, size, mtime): the
// kubelet swaps a mounted Secret by its ..data symlink, so a renewal changes it.
struct FileStamp {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  auto operator<=>(const FileStamp&) const = default;
};

// One client context for every connection. Built once from the files and never changed after
// (connections share it across threads); a renewal builds a new one (see changed()).
class TlsClient {
 public:
  // Reads the files. Throws BadInput naming the file and what is wrong with it: unreadable, no
  // certificate in it, a key that is not a key or does not match the certificate (never its bytes).
  explicit TlsClient(TlsSettings settings);
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  [[nodiscard]] boost::asio::ssl::context& context() const { return *context_; }
  [[nodiscard]] const TlsSettings& settings() const { return settings_; }
  [[nodiscard]] bool presents_certificate() const { return settings_.cert_file.has_value(); }
  // zkverify's own client certificate, when it presents one.
  [[nodiscard]] const std::optional<CertificateFacts>& client_certificate() const { return client_certificate_; }
  // Whether any of the files differs from when this context was built (renewed, replaced).
  [[nodiscard]] bool changed() const;
  ~TlsClient();

  // TLS session resumption, per server: a handshake with a server this client has completed one
  // with offers that session (the server then skips the certificates and their signatures: most of
  // a handshake's cost, on both sides). Sessions come from the server's tickets after a handshake
  // and stay with this client (a renewed client starts without any).
  void offer_session(void* native_ssl_handle, const std::string& server_key) const;

 private:
  TlsSettings settings_;
  std::unique_ptr<boost::asio::ssl::context> context_;
  std::optional<CertificateFacts> client_certificate_;
  std::vector<FileStamp> stamps_;

 public:
  struct Sessions;  // the resumable sessions by server, which OpenSSL's callback fills (tls.cpp)

 private:
  std::unique_ptr<Sessions> sessions_;
};

// The TLS client in use, renewed when its files change (the kubelet swaps a Secret that
// cert-manager renewed): a renewal applies to the connections made after it.
class TlsSource {
 public:
  explicit TlsSource(TlsSettings settings);  // builds the first client: throws BadInput as TlsClient does
  [[nodiscard]] std::shared_ptr<const TlsClient> current() const;
  struct Renewal {
    bool renewed = false;  // the files changed, and the new client is current
    std::string error;     // they changed, but could not be used (half-written, say): the old one stays
  };
  // A new client when the files changed since the current one was built; the next call tries again
  // after an error.
  Renewal renew_if_changed();

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const TlsClient> current_;
};

// What one handshake's verification saw: the server's certificate and the first thing wrong with it.
struct HandshakeNotes {
  std::optional<CertificateFacts> certificate;  // the server's (depth 0), also when it failed verification
  int x509_error = 0;                           // the chain's first error (X509_V_ERR_*), 0: none
  bool name_mismatch = false;                   // the chain was good, the name was not
  std::string expected_name;                    // the host it was checked against
  std::string session_key;                      // host:port, under which its session is kept
};

// The verification callback for a connection to `host`: the chain against the client's CAs, then
// (unless settings say not to) the host name or IP address against the certificate's names. It
// fills `notes`, which the caller reads after the handshake.
std::function<bool(bool, boost::asio::ssl::verify_context&)> verifier_for(const TlsClient& client,
                                                                          const std::string& host,
                                                                          const std::shared_ptr<HandshakeNotes>& notes);

// Where the session tickets of this connection go: `notes`' session_key (notes outlive the SSL).
void keep_session_under(void* native_ssl_handle, HandshakeNotes* notes);

// Right after a handshake: on a TLS 1.2 resumption whose ticket the server renewed (the JDK does,
// every time), OpenSSL retires the offered session at once and tells no callback of the renewed one,
// which is kept here. Kept later (at the connection's end), every handshake with that server in
// between offered the retired session and was a full one.
void keep_renewed_session(void* native_ssl_handle);

// Before an established connection is freed: keeps its TLS session resumable. Freed without a
// close_notify of ours (the peer hung up, a relay ends its session's connection), OpenSSL takes the
// session for a broken one. Ending so does not forbid resuming (TLS 1.1 on, RFC 5246 7.2.1); a fatal
// alert still does (OpenSSL drops the session at the alert).
void keep_session_resumable(void* native_ssl_handle);

// SNI for `host` on a handshake not yet started (nothing for an IP address, as RFC 6066 says).
void set_server_name(void* native_ssl_handle, const std::string& host);

// Sets what a connection to `host` sends and checks: SNI (for a DNS name) and the verifier.
template <class Stream>
void prepare_handshake(Stream& stream, const TlsClient& client, const std::string& host, std::uint16_t port,
                       const std::shared_ptr<HandshakeNotes>& notes) {
  set_server_name(stream.native_handle(), host);
  notes->session_key = host + ":" + std::to_string(port);
  client.offer_session(stream.native_handle(), notes->session_key);
  keep_session_under(stream.native_handle(), notes.get());
  stream.set_verify_mode(boost::asio::ssl::verify_peer);
  stream.set_verify_callback(verifier_for(client, host, notes));
}

struct TlsOutcome {
  TlsFailure failure = TlsFailure::none;
  std::string detail;  // in words, naming what the certificate says where it matters
};

// Why a TLS connection failed, from the error of its handshake (`in_handshake`) or of a read or
// write after it (a TLS 1.3 server refuses a missing client certificate only after the handshake).
// Handshake errors that look like a plain TCP peer come back as port_speaks_plain: the caller may
// confirm it by asking in plain TCP.
TlsOutcome explain_tls_error(const boost::system::error_code& error, const HandshakeNotes& notes,
                             bool presented_certificate, bool in_handshake);

// A context that trusts nothing and verifies nothing: only to find out whether a port speaks TLS.
boost::asio::ssl::context& sniffing_context();

// The server's certificate after a handshake (also a failed one, when it arrived), from the SSL handle.
std::optional<CertificateFacts> peer_certificate_of(void* native_ssl_handle);

}  // namespace zkverify::probes
