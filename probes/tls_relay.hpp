#pragma once
// Sessions over TLS with a C client built without it: each session reaches each of its servers
// through a relay of its own, a listener on a loopback address (one per server of the session)
// whose one connection at a time (the C client's) is carried to the server over TLS. On a shared
// host the relay serves only sockets of this process (one of its own descriptors is the connecting
// socket), and goes away with its session.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/ip/tcp.hpp>

#include "model/facts/addresses.hpp"
#include "probes/executor.hpp"
#include "probes/keeper.hpp"
#include "probes/resolver.hpp"
#include "probes/tls.hpp"

namespace zkverify::probes {

class TlsRelay {
 public:
  // Listens at once on `listen_on` (a loopback address; a port the kernel picks) for `server`. Each connection accepted
  // from this process replaces the one before (the C client reconnects after a loss) and is carried
  // once the TLS handshake with the server ended by `handshake_timeout`; a failed one is closed, so
  // the client moves on to its next server. Throws std::system_error when it cannot listen.
  // Each connection uses the TLS client `tls` gives at the time (renewed files apply to the next one).
  TlsRelay(Executor& executor, Resolver& resolver, std::function<std::shared_ptr<const TlsClient>()> tls,
           ServerAddress server, std::chrono::milliseconds handshake_timeout,
           const boost::asio::ip::address_v4& listen_on = boost::asio::ip::address_v4::loopback());
  // Stops listening and ends the connection it carries; returns at once.
  ~TlsRelay();
  TlsRelay(const TlsRelay&) = delete;
  TlsRelay& operator=(const TlsRelay&) = delete;

  [[nodiscard]] const boost::asio::ip::tcp::endpoint& endpoint() const { return endpoint_; }

  struct State;  // the listener and the connection it carries, shared with their coroutines

 private:
  std::shared_ptr<State> state_;
  boost::asio::ip::tcp::endpoint endpoint_;
};

// Whether the connection accepted from `peer` on `relay` (IPv4 loopback endpoints) was made by a
// socket this process holds.
bool connection_is_ours(const boost::asio::ip::tcp::endpoint& peer, const boost::asio::ip::tcp::endpoint& relay);

// Another factory's sessions (the C client's), each server reached through a TlsRelay of the
// session's own, over the TLS client current when the session opens (the sidecar renews it).
class TlsKeeperFactory final : public KeeperFactory {
 public:
  TlsKeeperFactory(KeeperFactory& inner, Executor& executor, std::function<std::shared_ptr<const TlsClient>()> tls,
                   Resolver& resolver = system_resolver());
  std::unique_ptr<Keeper> open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                               Keeper::Listener listener = nullptr) override;

 private:
  std::unique_ptr<TlsRelay> open_relay(std::size_t index, const ServerAddress& server,
                                       std::chrono::milliseconds handshake_timeout);

  KeeperFactory& inner_;
  Executor& executor_;
  std::function<std::shared_ptr<const TlsClient>()> tls_;
  Resolver& resolver_;
};

}  // namespace zkverify::probes
