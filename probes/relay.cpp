#include "probes/relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <filesystem>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "probes/actor.hpp"
#include "probes/forwarding_keeper.hpp"
#include "probes/sasl_handshake.hpp"
#include "probes/tcp.hpp"
#include "probes/tls_connect.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;
using Tcp = asio::ip::tcp;

namespace {

// Whether `address` (IPv4) is `expected`, address and port.
bool is_endpoint(const sockaddr_in& address, const Tcp::endpoint& expected) {
  return address.sin_family == AF_INET && expected.address().is_v4() &&
         address.sin_addr.s_addr == htonl(expected.address().to_v4().to_uint()) &&
         address.sin_port == htons(expected.port());
}

// Whether `fd` is a TCP socket from `local` to `remote`.
bool is_connection(int fd, const Tcp::endpoint& local, const Tcp::endpoint& remote) {
  sockaddr_in mine{};
  sockaddr_in theirs{};
  socklen_t mine_size = sizeof mine;
  socklen_t theirs_size = sizeof theirs;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_size) == 0 && is_endpoint(mine, local) &&
         ::getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &theirs_size) == 0 && is_endpoint(theirs, remote);
}

}  // namespace

// Asks each of this process's descriptors (a few dozen) for its addresses: two live connections
// never share both ends, so a match is the connecting socket itself. Reading /proc/self/net/tcp
// instead listed the whole network namespace's sockets, TIME_WAIT ones too, on every accept (18% of
// a TLS sidecar's CPU). A descriptor closed or reused meanwhile is only asked a question.
bool connection_is_ours(const Tcp::endpoint& peer, const Tcp::endpoint& relay) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    auto name = entry.path().filename().string();
    auto [end, parse_error] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (parse_error == std::errc() && end == name.data() + name.size() && is_connection(fd, peer, relay)) return true;
  }
  return false;
}

namespace {

// One carried connection: the C client's socket and the stream to the server (TLS or plain). Ends
// once: either side closing, or the relay going, closes both.
struct Carried {
  Carried(Tcp::socket client_socket, const asio::any_io_executor& strand, std::shared_ptr<const TlsClient> used)
      : tls(std::move(used)), client(std::move(client_socket)) {
    if (tls) secure.emplace(strand, tls->context());
    else plain.emplace(strand);
  }
  beast::tcp_stream& server_layer() { return secure ? beast::get_lowest_layer(*secure) : *plain; }
  void end() {
    if (ended) return;
    ended = true;
    if (secure) keep_session_resumable(secure->native_handle());  // a session's end is not a broken TLS session
    boost::system::error_code ignored;
    client.socket().close(ignored);
    server_layer().socket().close(ignored);
  }
  std::shared_ptr<const TlsClient> tls;  // before `secure`: its context must outlive it
  beast::tcp_stream client;
  std::optional<tls::Stream> secure;       // with TLS
  std::optional<beast::tcp_stream> plain;  // without
  bool ended = false;                      // on the strand
};

// Copies what `from` sends to `to` until either fails, then ends the connection.
template <class From, class To>
awaitable<void> copy(std::shared_ptr<Carried> carried, From& from, To& to) {
  char chunk[16 * 1024];
  for (;;) {
    boost::system::error_code error;
    auto n = co_await from.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, error));
    if (error) break;
    co_await asio::async_write(to, asio::buffer(chunk, n), asio::redirect_error(asio::use_awaitable, error));
    if (error) break;
  }
  carried->end();
}

}  // namespace

// The relay's actor (probes/actor.hpp): the acceptor and the connection it carries, on its strand,
// touched by the accept loop and the carrying coroutines, each holding a Task.
struct Relay::State : ActorCore {
  State(Executor& executor, Resolver& resolver_, RelaySettings given, ServerAddress address,
        std::chrono::milliseconds timeout, std::shared_ptr<SaslRefusals> record, const asio::ip::address_v4& listen_on)
      : ActorCore(executor),
        acceptor(strand(), Tcp::endpoint(listen_on, 0)),
        resolver(resolver_),
        settings(std::move(given)),
        server(std::move(address)),
        handshake_timeout(timeout),
        refusals(std::move(record)) {}
  // The relay goes with its session: no connection is accepted or carried after this.
  void on_stop() override {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    if (current) current->end();
  }
  Tcp::acceptor acceptor;
  Resolver& resolver;  // the process's (system_resolver()), or a test's that outlives the executor
  RelaySettings settings;
  ServerAddress server;
  std::chrono::milliseconds handshake_timeout;
  std::shared_ptr<SaslRefusals> refusals;
  bool refused = false;              // a SASL refusal met: later connections are closed unheard
  std::shared_ptr<Carried> current;  // on the strand
};

namespace {

// Runs the SASL handshake machine over the two sides until it is done (true) or failed (false,
// its refusal recorded), by the handshake timeout.
template <class Server>
awaitable<bool> authenticate(Relay::State& state, Carried& carried, Server& server) {
  auto settings = *state.settings.sasl;
  if (settings.host.empty()) settings.host = state.server.host;  // GSSAPI: zookeeper/HOST
  SaslConversation conversation(settings);
  SaslHandshake handshake(conversation);
  auto deadline = std::chrono::steady_clock::now() + state.handshake_timeout;
  carried.client.expires_at(deadline);
  carried.server_layer().expires_at(deadline);
  char chunk[4096];
  for (;;) {
    boost::system::error_code error;
    if (auto out = handshake.take_for_server(); !out.empty())
      co_await asio::async_write(server, asio::buffer(out), asio::redirect_error(asio::use_awaitable, error));
    if (auto out = handshake.take_for_client(); !out.empty() && !error)
      co_await asio::async_write(carried.client, asio::buffer(out), asio::redirect_error(asio::use_awaitable, error));
    if (error || carried.ended) co_return false;
    using Need = SaslHandshake::Need;
    if (handshake.need() == Need::done) break;
    if (handshake.need() == Need::failed) {
      const auto& sasl = *state.settings.sasl;
      state.refusals->record(
          {state.server.name, sasl.mechanism, sasl.user, handshake.failure(), handshake.refused_by_server()});
      state.refused = state.refused || handshake.refused_by_server();
      co_return false;
    }
    bool from_client = handshake.need() == Need::client_bytes;
    auto n = from_client ? co_await carried.client.async_read_some(asio::buffer(chunk),
                                                                   asio::redirect_error(asio::use_awaitable, error))
                         : co_await server.async_read_some(asio::buffer(chunk),
                                                           asio::redirect_error(asio::use_awaitable, error));
    if (error) co_return false;
    if (from_client) handshake.from_client({chunk, n});
    else handshake.from_server({chunk, n});
  }
  co_return true;
}

// A connected server's stream: authenticated where asked, then both ways copied.
template <class Server>
awaitable<void> pass(std::shared_ptr<Relay::State> state, std::shared_ptr<Carried> carried, Server& server) {
  if (state->settings.sasl && !co_await authenticate(*state, *carried, server)) {
    carried->end();
    co_return;
  }
  carried->client.expires_never();
  carried->server_layer().expires_never();  // a session lives as long as it lives
  asio::co_spawn(state->strand(), copy(carried, server, carried->client),
                 [task = state->task()](const std::exception_ptr&) {});
  co_await copy(carried, carried->client, server);
}

// The server reached (over TLS where asked) for one accepted connection, then passed.
awaitable<void> carry(std::shared_ptr<Relay::State> state, std::shared_ptr<Carried> carried) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + state->handshake_timeout;
  limits.connect_timeout = limits.exchange_timeout = state->handshake_timeout;
  tcp::Lookup lookup(state->strand(), state->resolver, state->server.host, limits.deadline);
  auto found = co_await lookup.result();
  Exchange exchange;
  bool connected = false;
  if (found.ok() && carried->secure)
    connected = co_await tls::connect(*carried->secure, *carried->tls, state->server.host, found.addresses,
                                      state->server.port, limits, exchange);
  else if (found.ok())
    connected = co_await tcp::connect(*carried->plain, found.addresses, state->server.port, limits, exchange);
  if (!connected || carried->ended) {
    carried->end();
    co_return;
  }
  if (carried->secure) co_await pass(state, carried, *carried->secure);
  else co_await pass(state, carried, *carried->plain);
}

awaitable<void> accept_loop(std::shared_ptr<Relay::State> state, Tcp::endpoint relay) {
  for (;;) {
    boost::system::error_code error;
    Tcp::socket socket(state->strand());
    co_await state->acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !state->acceptor.is_open()) co_return;
    if (error) continue;
    auto peer = socket.remote_endpoint(error);
    if (error || !connection_is_ours(peer, relay)) continue;  // not this process's: closed unheard
    if (state->refused) continue;                             // the server refused these credentials: closed unheard
    if (state->current) state->current->end();
    socket.set_option(Tcp::no_delay(true), error);  // the C client's packets, relayed as they come
    auto tls = state->settings.tls ? state->settings.tls() : nullptr;
    state->current = std::make_shared<Carried>(std::move(socket), state->strand(), std::move(tls));
    asio::co_spawn(state->strand(), carry(state, state->current), [task = state->task()](const std::exception_ptr&) {});
  }
}

}  // namespace

Relay::Relay(Executor& executor, Resolver& resolver, RelaySettings settings, ServerAddress server,
             std::chrono::milliseconds handshake_timeout, std::shared_ptr<SaslRefusals> refusals,
             const asio::ip::address_v4& listen_on)
    : state_(std::make_shared<State>(executor, resolver, std::move(settings), std::move(server), handshake_timeout,
                                     std::move(refusals), listen_on)),
      endpoint_(state_->acceptor.local_endpoint()) {
  asio::co_spawn(state_->strand(), accept_loop(state_, endpoint_),
                 [task = state_->task()](const std::exception_ptr&) {});
}

// Not waited for: the coroutines end at their next operation, on the state they own.
Relay::~Relay() { state_->stop(); }

namespace {

// A session and the relays it reaches its servers through, which must outlive it: the close goes
// through them. A session whose relays met a SASL refusal is not coming: once it has not connected,
// it was refused (auth_failed), and sasl_refusal() says why.
class RelayedKeeper final : public ForwardingKeeper {
 public:
  RelayedKeeper(std::unique_ptr<Keeper> session, std::vector<std::unique_ptr<Relay>> relays,
                std::shared_ptr<SaslRefusals> refusals)
      : ForwardingKeeper(std::move(session)), relays_(std::move(relays)), refusals_(std::move(refusals)) {}
  ~RelayedKeeper() override { release_session(); }
  ZkError wait_connected(Clock::time_point deadline) override {
    auto connected = session().wait_connected(deadline);
    return connected == ZkError::deadline_exceeded && refusals_->last() ? ZkError::auth_failed : connected;
  }
  [[nodiscard]] std::optional<SaslRefusal> sasl_refusal() const override { return refusals_->last(); }
  bool close(Clock::time_point deadline) override { return session().close(deadline); }

 private:
  std::vector<std::unique_ptr<Relay>> relays_;
  std::shared_ptr<SaslRefusals> refusals_;
};

}  // namespace

RelayKeeperFactory::RelayKeeperFactory(KeeperFactory& inner, Executor& executor, RelaySettings settings,
                                       Resolver& resolver)
    : inner_(inner), executor_(executor), settings_(std::move(settings)), resolver_(resolver) {}

// The session's i-th server's relay listens on 127.0.0.(1+i): the C client tells servers apart by
// address alone, not port, and moves a session that failed over back home (Keeper::return_home)
// only to another address. Where that address cannot be bound (a narrower loopback), 127.0.0.1.
std::unique_ptr<Relay> RelayKeeperFactory::open_relay(std::size_t index, const ServerAddress& server,
                                                      std::chrono::milliseconds handshake_timeout,
                                                      const std::shared_ptr<SaslRefusals>& refusals) {
  constexpr std::size_t kLoopbackAddresses = 254;  // 127.0.0.1 to 127.0.0.254
  const auto first = asio::ip::address_v4::loopback();
  if (index > 0 && index < kLoopbackAddresses) {
    try {
      asio::ip::address_v4 own(first.to_uint() + static_cast<asio::ip::address_v4::uint_type>(index));
      return std::make_unique<Relay>(executor_, resolver_, settings_, server, handshake_timeout, refusals, own);
    } catch (const boost::system::system_error&) {
    }
  }
  return std::make_unique<Relay>(executor_, resolver_, settings_, server, handshake_timeout, refusals, first);
}

std::unique_ptr<Keeper> RelayKeeperFactory::open(const std::vector<ServerAddress>& servers,
                                                 const KeeperOptions& options, Keeper::Listener listener) {
  // A third of the session timeout, as the C client gives each server to connect.
  auto handshake_timeout = std::max(options.session_timeout / 3, std::chrono::milliseconds(1000));
  auto refusals = std::make_shared<SaslRefusals>();
  std::vector<std::unique_ptr<Relay>> relays;
  std::vector<ServerAddress> through_relays;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    relays.push_back(open_relay(i, servers[i], handshake_timeout, refusals));
    auto relayed = servers[i];
    relayed.host = relays.back()->endpoint().address().to_string();
    relayed.port = relays.back()->endpoint().port();
    through_relays.push_back(std::move(relayed));
  }
  auto relayed_options = options;
  relayed_options.sasl = relayed_options.sasl || settings_.sasl.has_value();
  return std::make_unique<RelayedKeeper>(inner_.open(through_relays, relayed_options, std::move(listener)),
                                         std::move(relays), std::move(refusals));
}

}  // namespace zkverify::probes
