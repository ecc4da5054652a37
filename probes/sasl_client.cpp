#include "probes/sasl_client.hpp"

#include <sasl/sasl.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace zkverify::probes {

namespace {

// Cyrus SASL's default mutexes do nothing: its plugins' shared state (DIGEST-MD5's
// re-authentication cache) would race between relays on the executor's threads.
void* mutex_alloc() { return new std::mutex; }
int mutex_lock(void* mutex) {
  static_cast<std::mutex*>(mutex)->lock();
  return SASL_OK;
}
int mutex_unlock(void* mutex) {
  static_cast<std::mutex*>(mutex)->unlock();
  return SASL_OK;
}
void mutex_free(void* mutex) { delete static_cast<std::mutex*>(mutex); }

// The library once per process, before its first conversation; its error, if any.
int initialised() {
  static const int result = [] {
    sasl_set_mutex(mutex_alloc, mutex_lock, mutex_unlock, mutex_free);
    return sasl_client_init(nullptr);
  }();
  return result;
}

std::string library_error(int code, sasl_conn_t* connection) {
  std::string text = sasl_errstring(code, nullptr, nullptr);
  if (connection != nullptr) {
    const char* detail = sasl_errdetail(connection);
    if (detail != nullptr && *detail != '\0') text = detail;
  }
  return text;
}

// Cyrus keeps every callback as int (*)(); each is called with its own type. Through void (*)(),
// the type-erasing cast compilers accept.
using ErasedCallback = int (*)();
template <class Function>
ErasedCallback erased(Function* function) {
  return reinterpret_cast<ErasedCallback>(reinterpret_cast<void (*)()>(function));
}

}  // namespace

struct SaslConversation::State {
  explicit State(const SaslSettings& given) : settings(given) {
    secret.reset(static_cast<sasl_secret_t*>(std::calloc(1, sizeof(sasl_secret_t) + settings.password.size())));
    secret->len = settings.password.size();
    std::memcpy(secret->data, settings.password.data(), settings.password.size());
  }
  ~State() {
    if (connection != nullptr) sasl_dispose(&connection);
    if (secret) std::memset(secret->data, 0, secret->len);
  }
  static int user(void* context, int /*id*/, const char** result, unsigned* length) {
    const auto& name = static_cast<State*>(context)->settings.user;
    *result = name.c_str();
    if (length != nullptr) *length = static_cast<unsigned>(name.size());
    return SASL_OK;
  }
  static int password(sasl_conn_t* /*connection*/, void* context, int /*id*/, sasl_secret_t** result) {
    *result = static_cast<State*>(context)->secret.get();
    return SASL_OK;
  }
  // The first realm the server offers (ZooKeeper's: "zk-sasl-md5"), as the Java client takes it.
  static int realm(void* /*context*/, int /*id*/, const char** offered, const char** result) {
    *result = offered != nullptr && offered[0] != nullptr ? offered[0] : "";
    return SASL_OK;
  }
  SaslSettings settings;
  struct FreeSecret {
    void operator()(sasl_secret_t* held) const { std::free(held); }
  };
  std::unique_ptr<sasl_secret_t, FreeSecret> secret;
  sasl_callback_t callbacks[5] = {};
  sasl_conn_t* connection = nullptr;
};

SaslConversation::SaslConversation(const SaslSettings& settings) : state_(std::make_unique<State>(settings)) {
  void* context = state_.get();
  auto& callbacks = state_->callbacks;
  callbacks[0] = {SASL_CB_USER, erased(&State::user), context};
  callbacks[1] = {SASL_CB_AUTHNAME, erased(&State::user), context};
  callbacks[2] = {SASL_CB_PASS, erased(&State::password), context};
  callbacks[3] = {SASL_CB_GETREALM, erased(&State::realm), context};
  callbacks[4] = {SASL_CB_LIST_END, nullptr, nullptr};
}

SaslConversation::~SaslConversation() = default;

SaslStep SaslConversation::start() {
  if (int init = initialised(); init != SASL_OK) return {false, false, {}, library_error(init, nullptr)};
  auto& s = *state_;
  int made = sasl_client_new(s.settings.service.c_str(), s.settings.host.c_str(), nullptr, nullptr, s.callbacks, 0,
                             &s.connection);
  if (made != SASL_OK) return {false, false, {}, library_error(made, nullptr)};
  const char* out = nullptr;
  unsigned out_length = 0;
  const char* chosen = nullptr;
  int started = sasl_client_start(s.connection, s.settings.mechanism.c_str(), nullptr, &out, &out_length, &chosen);
  if (started != SASL_OK && started != SASL_CONTINUE) return {false, false, {}, library_error(started, s.connection)};
  if (s.settings.mechanism == "DIGEST-MD5") out_length = 0;  // see the header
  return {true, started == SASL_OK, std::string(out != nullptr ? out : "", out_length), {}};
}

SaslStep SaslConversation::step(std::string_view challenge) {
  auto& s = *state_;
  const char* out = nullptr;
  unsigned out_length = 0;
  int stepped = sasl_client_step(s.connection, challenge.data(), static_cast<unsigned>(challenge.size()), nullptr, &out,
                                 &out_length);
  if (stepped != SASL_OK && stepped != SASL_CONTINUE) return {false, false, {}, library_error(stepped, s.connection)};
  return {true, stepped == SASL_OK, std::string(out != nullptr ? out : "", out_length), {}};
}

}  // namespace zkverify::probes
