#pragma once
// One SASL conversation on this host's Cyrus SASL library (its mechanisms are plugins:
// libsasl2-modules has DIGEST-MD5), as the relay makes it for each connection it carries.

#include <memory>
#include <string>
#include <string_view>

#include "model/facts/credentials.hpp"

namespace zkverify::probes {

struct SaslStep {
  bool ok = false;        // false: the library failed; `error` says why
  bool complete = false;  // the mechanism has ended on this host's side
  std::string token;      // to send to the server (may be empty: DIGEST-MD5's first)
  std::string error;
};

// A mechanism's side of an exchange: SaslConversation, or a test's.
class SaslMechanism {
 public:
  SaslMechanism() = default;
  virtual ~SaslMechanism() = default;
  SaslMechanism(const SaslMechanism&) = delete;
  SaslMechanism& operator=(const SaslMechanism&) = delete;
  // The first token to send.
  virtual SaslStep start() = 0;
  // The answer to the server's `challenge`.
  virtual SaslStep step(std::string_view challenge) = 0;
};

class SaslConversation final : public SaslMechanism {
 public:
  // A conversation as `settings` say (the mechanism, its user and password, service and host).
  explicit SaslConversation(const SaslSettings& settings);
  ~SaslConversation() override;
  SaslConversation(const SaslConversation&) = delete;
  SaslConversation& operator=(const SaslConversation&) = delete;

  // The first token. Never an initial response for DIGEST-MD5: the servers' Java mechanism takes
  // none (JDK-6682540), so a cached re-authentication is not offered.
  SaslStep start() override;
  SaslStep step(std::string_view challenge) override;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace zkverify::probes
