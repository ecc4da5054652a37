#pragma once
// Sessions the C client cannot make alone (it is built without TLS and without SASL): each session
// reaches each of its servers through a relay of its own, a listener on a loopback address (one per
// server of the session) whose one connection at a time (the C client's) is carried to the server,
// over TLS where asked, after a SASL exchange of the relay's own where asked (probes/sasl_handshake).
// On a shared host the relay serves only sockets of this process (one of its own descriptors is the
// connecting socket), and goes away with its session.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/ip/tcp.hpp>

#include "model/facts/addresses.hpp"
#include "model/facts/credentials.hpp"
#include "probes/executor.hpp"
#include "probes/keeper.hpp"
#include "probes/resolver.hpp"
#include "probes/tls.hpp"

namespace zkverify::probes {

// How a relay reaches its server.
struct RelaySettings {
  // Over TLS, with the client this gives when a connection is accepted (renewed files apply to the
  // next one); empty: plain TCP.
  std::function<std::shared_ptr<const TlsClient>()> tls;
  std::optional<SaslSettings> sasl;  // authenticate every connection so
};

// The last SASL refusal a session's relays met, for the session's owner to read. A leaf lock
// (ARCHITECTURE.md): the relays write it on their strands, the command reads it from its thread.
class SaslRefusals {
 public:
  void record(SaslRefusal refusal) {
    std::lock_guard lock(mutex_);
    last_ = std::move(refusal);
  }
  [[nodiscard]] std::optional<SaslRefusal> last() const {
    std::lock_guard lock(mutex_);
    return last_;
  }

 private:
  mutable std::mutex mutex_;
  std::optional<SaslRefusal> last_;
};

class Relay {
 public:
  // Listens at once on `listen_on` (a loopback address; a port the kernel picks) for `server`. Each
  // connection accepted from this process replaces the one before (the C client reconnects after a
  // loss) and is carried once connected (TLS's handshake, SASL's exchange) by `handshake_timeout`;
  // a failed one is closed, so the client moves on to its next server. After a SASL refusal (into
  // `refusals`) later connections are closed unheard: the same credentials would be refused again.
  // Throws std::system_error when it cannot listen.
  Relay(Executor& executor, Resolver& resolver, RelaySettings settings, ServerAddress server,
        std::chrono::milliseconds handshake_timeout, std::shared_ptr<SaslRefusals> refusals,
        const boost::asio::ip::address_v4& listen_on = boost::asio::ip::address_v4::loopback());
  // Stops listening and ends the connection it carries; returns at once.
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  [[nodiscard]] const boost::asio::ip::tcp::endpoint& endpoint() const { return endpoint_; }

  struct State;  // the listener and the connection it carries, shared with their coroutines

 private:
  std::shared_ptr<State> state_;
  boost::asio::ip::tcp::endpoint endpoint_;
};

// Whether the connection accepted from `peer` on `relay` (IPv4 loopback endpoints) was made by a
// socket this process holds.
bool connection_is_ours(const boost::asio::ip::tcp::endpoint& peer, const boost::asio::ip::tcp::endpoint& relay);

// Another factory's sessions (the C client's), each server reached through a Relay of the
// session's own, as `settings` say (the TLS client current when the session opens: the sidecar
// renews it). Its sessions' sasl_refusal() is their relays'.
class RelayKeeperFactory final : public KeeperFactory {
 public:
  RelayKeeperFactory(KeeperFactory& inner, Executor& executor, RelaySettings settings,
                     Resolver& resolver = system_resolver());
  std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                               Keeper::Listener listener = nullptr) override;

 private:
  std::unique_ptr<Relay> open_relay(std::size_t index, const ServerAddress& server,
                                    std::chrono::milliseconds handshake_timeout,
                                    const std::shared_ptr<SaslRefusals>& refusals);

  KeeperFactory& inner_;
  Executor& executor_;
  RelaySettings settings_;
  Resolver& resolver_;
};

}  // namespace zkverify::probes
