#include "probes/kerberos.hpp"

#include <krb5.h>

#include <memory>
#include <string_view>

#include <fmt/format.h>

namespace zkverify::probes {

namespace {

using Time = KerberosFacts::Time;

// MIT's timestamps are 32 bits, unsigned in fact (past 2038 they wrap negative).
Time time_of(krb5_timestamp stamp) {
  return std::chrono::system_clock::from_time_t(static_cast<std::time_t>(static_cast<std::uint32_t>(stamp)));
}

// One library context, and the words of its errors.
class Krb5 {
 public:
  Krb5() { failed_ = krb5_init_context(&context_); }
  ~Krb5() {
    if (context_ != nullptr) krb5_free_context(context_);
  }
  Krb5(const Krb5&) = delete;
  Krb5& operator=(const Krb5&) = delete;

  [[nodiscard]] krb5_context get() const { return context_; }
  [[nodiscard]] krb5_error_code init_failure() const { return failed_; }
  [[nodiscard]] std::string message(krb5_error_code code) const {
    if (context_ == nullptr) return fmt::format("Kerberos could not start (error {})", code);
    const char* text = krb5_get_error_message(context_, code);
    std::string said = text;
    krb5_free_error_message(context_, text);
    return said;
  }
  [[nodiscard]] std::string name(krb5_const_principal principal) const {
    char* text = nullptr;
    if (krb5_unparse_name(context_, principal, &text) != 0) return "?";
    std::string said = text;
    krb5_free_unparsed_name(context_, text);
    return said;
  }

 private:
  krb5_context context_ = nullptr;
  krb5_error_code failed_ = 0;
};

// Frees what the library made, in any order of failure.
template <class T, void (*Free)(krb5_context, T)>
class Held {
 public:
  explicit Held(const Krb5& krb5) : context_(krb5.get()) {}
  ~Held() {
    if (value_ != nullptr) Free(context_, value_);
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  T* out() { return &value_; }
  T get() const { return value_; }

 private:
  krb5_context context_;
  T value_ = nullptr;
};

void close_cache(krb5_context context, krb5_ccache cache) { krb5_cc_close(context, cache); }
void close_keytab(krb5_context context, krb5_keytab keytab) { krb5_kt_close(context, keytab); }
using Cache = Held<krb5_ccache, close_cache>;
using Keytab = Held<krb5_keytab, close_keytab>;
using Principal = Held<krb5_principal, krb5_free_principal>;

bool is_ticket_granting(const Krb5& krb5, krb5_const_principal server, krb5_const_principal client) {
  std::string_view realm(client->realm.data, client->realm.length);
  return krb5.name(server) == fmt::format("krbtgt/{}@{}", realm, realm);
}

void read_cache(const Krb5& krb5, KerberosFacts& facts) {
  Cache cache(krb5);
  if (auto code = krb5_cc_default(krb5.get(), cache.out())) return void(facts.error = krb5.message(code));
  facts.source = fmt::format("ticket cache {}:{}", krb5_cc_get_type(krb5.get(), cache.get()),
                             krb5_cc_get_name(krb5.get(), cache.get()));
  Principal client(krb5);
  if (auto code = krb5_cc_get_principal(krb5.get(), cache.get(), client.out()))
    return void(facts.error = krb5.message(code));
  facts.principal = krb5.name(client.get());
  krb5_cc_cursor cursor = nullptr;
  if (auto code = krb5_cc_start_seq_get(krb5.get(), cache.get(), &cursor))
    return void(facts.error = krb5.message(code));
  krb5_creds creds{};
  while (krb5_cc_next_cred(krb5.get(), cache.get(), &cursor, &creds) == 0) {
    if (!krb5_is_config_principal(krb5.get(), creds.server) && is_ticket_granting(krb5, creds.server, client.get())) {
      facts.ticket_ends = time_of(creds.times.endtime);
      if (creds.times.renew_till != 0) facts.renewable_until = time_of(creds.times.renew_till);
    }
    krb5_free_cred_contents(krb5.get(), &creds);
  }
  krb5_cc_end_seq_get(krb5.get(), cache.get(), &cursor);
  if (!facts.ticket_ends) facts.error = "no ticket-granting ticket in the cache";
}

// The KDC's word on the principal's expiry, as the library passes it on (0: none). MIT's KDC gives
// the sooner of the password's and the account's expiry as the reply's key expiration, which the
// library passes on as the password's: the two are one fact here.
void on_expiry(krb5_context /*context*/, void* data, krb5_timestamp password, krb5_timestamp account,
               krb5_boolean /*is_last_req*/) {
  auto& facts = *static_cast<KerberosFacts*>(data);
  for (auto stamp : {password, account})
    if (stamp != 0 && (!facts.principal_expires || time_of(stamp) < *facts.principal_expires))
      facts.principal_expires = time_of(stamp);
}

void read_keytab(const Krb5& krb5, const std::string& path, KerberosFacts& facts) {
  facts.source = "keytab " + path;
  facts.from_keytab = true;
  Keytab keytab(krb5);
  if (auto code = krb5_kt_resolve(krb5.get(), ("FILE:" + path).c_str(), keytab.out()))
    return void(facts.error = krb5.message(code));
  Principal client(krb5);  // the keytab's first entry, as MIT's client keytab takes it
  krb5_kt_cursor cursor = nullptr;
  if (auto code = krb5_kt_start_seq_get(krb5.get(), keytab.get(), &cursor))
    return void(facts.error = krb5.message(code));
  krb5_keytab_entry entry{};
  auto code = krb5_kt_next_entry(krb5.get(), keytab.get(), &entry, &cursor);
  if (code == 0) {
    code = krb5_copy_principal(krb5.get(), entry.principal, client.out());
    krb5_free_keytab_entry_contents(krb5.get(), &entry);
  }
  krb5_kt_end_seq_get(krb5.get(), keytab.get(), &cursor);
  if (code != 0) return void(facts.error = krb5.message(code));
  facts.principal = krb5.name(client.get());
  krb5_get_init_creds_opt* options = nullptr;
  if ((code = krb5_get_init_creds_opt_alloc(krb5.get(), &options))) return void(facts.error = krb5.message(code));
  krb5_get_init_creds_opt_set_expire_callback(krb5.get(), options, on_expiry, &facts);
  krb5_creds creds{};
  code = krb5_get_init_creds_keytab(krb5.get(), &creds, client.get(), keytab.get(), 0, nullptr, options);
  krb5_get_init_creds_opt_free(krb5.get(), options);
  if (code != 0) return void(facts.error = krb5.message(code));
  facts.ticket_ends = time_of(creds.times.endtime);
  krb5_free_cred_contents(krb5.get(), &creds);
}

}  // namespace

KerberosFacts read_kerberos(const std::optional<std::string>& keytab) {
  KerberosFacts facts;
  facts.read_at = std::chrono::system_clock::now();
  Krb5 krb5;
  if (krb5.init_failure() != 0) {
    facts.error = krb5.message(krb5.init_failure());
    return facts;
  }
  if (keytab) read_keytab(krb5, *keytab, facts);
  else read_cache(krb5, facts);
  return facts;
}

}  // namespace zkverify::probes
