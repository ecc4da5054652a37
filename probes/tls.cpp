#include "probes/tls.hpp"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include "model/facts/failure.hpp"
#include "model/facts/time_text.hpp"

namespace zkverify::probes {

namespace ssl = boost::asio::ssl;

namespace {

std::string read_whole(const std::string& path, const char* option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(fmt::format("{} {}: cannot be read", option, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The newest OpenSSL error, in its own words, and the queue emptied (it is per thread).
std::string openssl_words() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no details";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

FileStamp stamp_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return {static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
          static_cast<std::uint64_t>(info.st_size),
          static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec};
}

// OpenSSL's objects owned the C++ way: freed on every path out, an exception's too.
template <auto Free>
struct Freeing {
  template <class T>
  void operator()(T* object) const {
    Free(object);
  }
};
using Bio = std::unique_ptr<BIO, Freeing<BIO_free>>;
using Certificate = std::unique_ptr<X509, Freeing<X509_free>>;
using PrivateKey = std::unique_ptr<EVP_PKEY, Freeing<EVP_PKEY_free>>;
using AltNames = std::unique_ptr<GENERAL_NAMES, Freeing<GENERAL_NAMES_free>>;
using Session = std::unique_ptr<SSL_SESSION, Freeing<SSL_SESSION_free>>;

Bio memory_of(const std::string& pem) { return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

std::string name_text(const X509_NAME* name) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio) throw std::bad_alloc();
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return {data, static_cast<std::size_t>(size)};
}

std::chrono::system_clock::time_point time_of(const ASN1_TIME* when) {
  std::tm parts{};
  if (!when || ASN1_TIME_to_tm(when, &parts) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&parts));
}

std::vector<std::string> names_of(X509* certificate) {
  std::vector<std::string> names;
  AltNames alt(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; alt && i < sk_GENERAL_NAME_num(alt.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(alt.get(), i);
    if (name->type == GEN_DNS) {
      const auto* text = ASN1_STRING_get0_data(name->d.dNSName);
      names.push_back("DNS:" + std::string(reinterpret_cast<const char*>(text),
                                           static_cast<std::size_t>(ASN1_STRING_length(name->d.dNSName))));
    } else if (name->type == GEN_IPADD) {
      int length = ASN1_STRING_length(name->d.iPAddress);
      const unsigned char* bytes = ASN1_STRING_get0_data(name->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = "?";
      if (length == 4 || length == 16) inet_ntop(length == 4 ? AF_INET : AF_INET6, bytes, text, sizeof text);
      names.push_back(std::string("IP:") + text);
    }
  }
  return names;
}

CertificateFacts facts_of(X509* certificate) {
  return {name_text(X509_get_subject_name(certificate)), name_text(X509_get_issuer_name(certificate)),
          time_of(X509_get0_notBefore(certificate)), time_of(X509_get0_notAfter(certificate)), names_of(certificate)};
}

std::optional<CertificateFacts> first_certificate_in(const std::string& pem) {
  auto bio = memory_of(pem);
  Certificate certificate(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!certificate) return std::nullopt;
  return facts_of(certificate.get());
}

// The CA bundle: at least one certificate, loaded into the context's trust store.
void load_trusted(ssl::context& context, const std::string& path) {
  auto pem = read_whole(path, "--tls-ca");
  if (!first_certificate_in(pem)) throw BadInput(fmt::format("--tls-ca {}: no PEM certificate in it", path));
  boost::system::error_code error;
  context.load_verify_file(path, error);
  if (error) throw BadInput(fmt::format("--tls-ca {}: cannot be loaded: {}", path, openssl_words()));
}

// The client certificate and its key, which must belong together. The key's bytes never reach a
// message: only that it could not be used.
std::optional<CertificateFacts> load_identity(ssl::context& context, const std::string& cert, const std::string& key) {
  auto facts = first_certificate_in(read_whole(cert, "--tls-cert"));
  if (!facts) throw BadInput(fmt::format("--tls-cert {}: no PEM certificate in it", cert));
  boost::system::error_code error;
  context.use_certificate_chain_file(cert, error);
  if (error) throw BadInput(fmt::format("--tls-cert {}: cannot be loaded: {}", cert, openssl_words()));
  auto pem = read_whole(key, "--tls-key");
  auto bio = memory_of(pem);
  // No passphrase callback: an encrypted key is refused, never prompted for.
  PrivateKey private_key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!private_key) throw BadInput(fmt::format("--tls-key {}: no unencrypted PEM private key in it", key));
  bool belongs = SSL_CTX_use_PrivateKey(context.native_handle(), private_key.get()) == 1 &&
                 SSL_CTX_check_private_key(context.native_handle()) == 1;
  ERR_clear_error();
  if (!belongs)
    throw BadInput(fmt::format("--tls-key {} does not belong to the certificate of --tls-cert {}", key, cert));
  return facts;
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code error;
  boost::asio::ip::make_address(host, error);
  return !error;
}

std::string certificate_words(const HandshakeNotes& notes) {
  if (!notes.certificate) return "the server's certificate";
  return fmt::format("the server's certificate ({}, issued by {})", notes.certificate->subject,
                     notes.certificate->issuer);
}

TlsOutcome chain_failure(const HandshakeNotes& notes) {
  const auto& certificate = notes.certificate;
  switch (notes.x509_error) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return {TlsFailure::expired,
              fmt::format("{} expired on {}", certificate_words(notes),
                          certificate ? iso8601(certificate->not_after) : std::string("an unknown date"))};
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return {TlsFailure::not_yet_valid,
              fmt::format("{} is not valid before {} (is this machine's clock right?)", certificate_words(notes),
                          certificate ? iso8601(certificate->not_before) : std::string("an unknown date"))};
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return {TlsFailure::unknown_ca, fmt::format("{} is not signed by a CA of --tls-ca ({})", certificate_words(notes),
                                                  X509_verify_cert_error_string(notes.x509_error))};
    default:
      return {TlsFailure::other, fmt::format("{} failed verification: {}", certificate_words(notes),
                                             X509_verify_cert_error_string(notes.x509_error))};
  }
}

TlsOutcome name_failure(const HandshakeNotes& notes) {
  std::string names = "no names";
  if (notes.certificate && !notes.certificate->names.empty())
    names = fmt::format("{}", fmt::join(notes.certificate->names, ", "));
  return {TlsFailure::name_mismatch,
          fmt::format("the server's certificate is for {}, not for {} (list the servers by a name it has, or give "
                      "--tls-no-hostname-check)",
                      names, notes.expected_name)};
}

// A refusal the server sent as an alert: about zkverify's own certificate, or its absence.
std::optional<TlsOutcome> client_certificate_refusal(int reason, bool presented_certificate) {
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR: break;
    default: return std::nullopt;
  }
  if (!presented_certificate)
    return TlsOutcome{TlsFailure::client_cert_required,
                      "the server requires a client certificate (ssl.clientAuth): give --tls-cert and --tls-key"};
  return TlsOutcome{TlsFailure::client_cert_rejected,
                    fmt::format("the server refused zkverify's client certificate ({}): is it signed by a CA the "
                                "server trusts (its ssl.trustStore), and still valid?",
                                ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, reason)))};
}

int notes_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int sessions_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

struct TlsClient::Sessions {
  std::mutex mutex;
  std::map<std::string, Session> by_server;
};

namespace {

// OpenSSL's: a session (a TLS 1.3 ticket) arrived on `ssl`; kept, replacing the server's older one.
int keep_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* notes = static_cast<HandshakeNotes*>(SSL_get_ex_data(ssl, notes_index()));
  auto* sessions = static_cast<TlsClient::Sessions*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), sessions_index()));
  if (!notes || !sessions || notes->session_key.empty()) return 0;  // not ours to keep: OpenSSL frees it
  std::lock_guard lock(sessions->mutex);
  sessions->by_server[notes->session_key] = Session(session);  // the server's older one is freed
  return 1;
}

}  // namespace

TlsClient::~TlsClient() = default;

void TlsClient::offer_session(void* native_ssl_handle, const std::string& server_key) const {
  std::lock_guard lock(sessions_->mutex);
  auto kept = sessions_->by_server.find(server_key);
  if (kept != sessions_->by_server.end()) SSL_set_session(static_cast<SSL*>(native_ssl_handle), kept->second.get());
}

void keep_session_under(void* native_ssl_handle, HandshakeNotes* notes) {
  SSL_set_ex_data(static_cast<SSL*>(native_ssl_handle), notes_index(), notes);
}

TlsClient::TlsClient(TlsSettings settings)
    : settings_(std::move(settings)), context_(std::make_unique<ssl::context>(ssl::context::tls_client)) {
  SSL_CTX_set_min_proto_version(context_->native_handle(), TLS1_2_VERSION);
  sessions_ = std::make_unique<Sessions>();
  SSL_CTX_set_ex_data(context_->native_handle(), sessions_index(), sessions_.get());
  SSL_CTX_set_session_cache_mode(context_->native_handle(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(context_->native_handle(), keep_new_session);
  load_trusted(*context_, settings_.ca_file);
  stamps_.push_back(stamp_of(settings_.ca_file));
  if (settings_.cert_file && settings_.key_file) {
    client_certificate_ = load_identity(*context_, *settings_.cert_file, *settings_.key_file);
    stamps_.push_back(stamp_of(*settings_.cert_file));
    stamps_.push_back(stamp_of(*settings_.key_file));
  }
}

bool TlsClient::changed() const {
  std::vector<FileStamp> now{stamp_of(settings_.ca_file)};
  if (settings_.cert_file && settings_.key_file) {
    now.push_back(stamp_of(*settings_.cert_file));
    now.push_back(stamp_of(*settings_.key_file));
  }
  return now != stamps_;
}

TlsSource::TlsSource(TlsSettings settings) : current_(std::make_shared<const TlsClient>(std::move(settings))) {}

std::shared_ptr<const TlsClient> TlsSource::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

TlsSource::Renewal TlsSource::renew_if_changed() {
  auto now = current();
  if (!now->changed()) return {};
  try {
    auto renewed = std::make_shared<const TlsClient>(now->settings());
    std::lock_guard lock(mutex_);
    current_ = std::move(renewed);
    return {true, ""};
  } catch (const BadInput& error) {
    return {false, error.what()};
  }
}

void keep_session_resumable(void* native_ssl_handle) {
  auto* ssl = static_cast<SSL*>(native_ssl_handle);
  SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
}

void keep_renewed_session(void* native_ssl_handle) {
  auto* ssl = static_cast<SSL*>(native_ssl_handle);
  auto* notes = static_cast<HandshakeNotes*>(SSL_get_ex_data(ssl, notes_index()));
  auto* sessions = static_cast<TlsClient::Sessions*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), sessions_index()));
  SSL_SESSION* now = SSL_get_session(ssl);
  if (!notes || !sessions || notes->session_key.empty() || !SSL_session_reused(ssl) || !now ||
      !SSL_SESSION_is_resumable(now))
    return;
  std::lock_guard lock(sessions->mutex);
  auto& kept = sessions->by_server[notes->session_key];
  if (kept.get() == now) return;
  SSL_SESSION_up_ref(now);
  kept = Session(now);
}

void set_server_name(void* native_ssl_handle, const std::string& host) {
  if (!is_ip_address(host)) SSL_set_tlsext_host_name(static_cast<SSL*>(native_ssl_handle), host.c_str());
}

std::function<bool(bool, ssl::verify_context&)> verifier_for(const TlsClient& client, const std::string& host,
                                                             const std::shared_ptr<HandshakeNotes>& notes) {
  notes->expected_name = host;
  return [notes, host, check_name = client.settings().check_hostname](bool preverified, ssl::verify_context& context) {
    X509_STORE_CTX* store = context.native_handle();
    int depth = X509_STORE_CTX_get_error_depth(store);
    if (!notes->certificate)  // the server's own, whichever depth failed first
      if (X509* leaf = X509_STORE_CTX_get0_cert(store)) notes->certificate = facts_of(leaf);
    if (!preverified) {
      if (notes->x509_error == 0) notes->x509_error = X509_STORE_CTX_get_error(store);
      return false;
    }
    if (depth == 0 && check_name && !ssl::host_name_verification(host)(true, context)) {
      notes->name_mismatch = true;
      return false;
    }
    return true;
  };
}

TlsOutcome explain_tls_error(const boost::system::error_code& error, const HandshakeNotes& notes,
                             bool presented_certificate, bool in_handshake) {
  if (notes.x509_error != 0) return chain_failure(notes);
  if (notes.name_mismatch) return name_failure(notes);
  if (error.category() == boost::asio::error::get_ssl_category()) {
    int reason = ERR_GET_REASON(static_cast<unsigned long>(error.value()));
    if (auto refusal = client_certificate_refusal(reason, presented_certificate)) return *refusal;
    if (in_handshake && (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
                         reason == SSL_R_UNEXPECTED_EOF_WHILE_READING))
      return {TlsFailure::port_speaks_plain, "the server did not answer the TLS handshake in TLS"};
    return {TlsFailure::other, error.message()};
  }
  if (in_handshake && (error == boost::asio::error::eof || error == ssl::error::stream_truncated ||
                       error == boost::asio::error::connection_reset))
    return {TlsFailure::port_speaks_plain, "the server closed the connection during the TLS handshake"};
  return {TlsFailure::other, error.message()};
}

ssl::context& sniffing_context() {
  static ssl::context context = [] {
    ssl::context made(ssl::context::tls_client);
    made.set_verify_mode(ssl::verify_none);
    return made;
  }();
  return context;
}

std::optional<CertificateFacts> peer_certificate_of(void* native_ssl_handle) {
  Certificate certificate(SSL_get1_peer_certificate(static_cast<SSL*>(native_ssl_handle)));
  if (!certificate) return std::nullopt;
  return facts_of(certificate.get());
}

}  // namespace zkverify::probes
