#include "probes/tls_relay.hpp"

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

// One carried connection: the C client's socket and the TLS stream to the server. Ends once: either
// side closing, or the relay going, closes both.
struct Carried {
  Carried(Tcp::socket client_socket, const asio::any_io_executor& strand, std::shared_ptr<const TlsClient> used)
      : tls(std::move(used)), client(std::move(client_socket)), server(strand, tls->context()) {}
  void end() {
    if (ended) return;
    ended = true;
    keep_session_resumable(server.native_handle());  // a session's end is not a broken TLS session
    boost::system::error_code ignored;
    client.close(ignored);
    beast::get_lowest_layer(server).socket().close(ignored);
  }
  std::shared_ptr<const TlsClient> tls;  // before `server`: its context must outlive it
  Tcp::socket client;
  tls::Stream server;
  bool ended = false;  // on the strand
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
struct TlsRelay::State : ActorCore {
  State(Executor& executor, Resolver& resolver_, std::function<std::shared_ptr<const TlsClient>()> client,
        ServerAddress address, std::chrono::milliseconds timeout, const asio::ip::address_v4& listen_on)
      : ActorCore(executor),
        acceptor(strand(), Tcp::endpoint(listen_on, 0)),
        resolver(resolver_),
        tls(std::move(client)),
        server(std::move(address)),
        handshake_timeout(timeout) {}
  // The relay goes with its session: no connection is accepted or carried after this.
  void on_stop() override {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    if (current) current->end();
  }
  Tcp::acceptor acceptor;
  Resolver& resolver;  // the process's (system_resolver()), or a test's that outlives the executor
  std::function<std::shared_ptr<const TlsClient>()> tls;
  ServerAddress server;
  std::chrono::milliseconds handshake_timeout;
  std::shared_ptr<Carried> current;  // on the strand
};

namespace {

// The server reached over TLS for one accepted connection, then both ways copied.
awaitable<void> carry(std::shared_ptr<TlsRelay::State> state, std::shared_ptr<Carried> carried) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + state->handshake_timeout;
  limits.connect_timeout = limits.exchange_timeout = state->handshake_timeout;
  tcp::Lookup lookup(state->strand(), state->resolver, state->server.host, limits.deadline);
  auto found = co_await lookup.result();
  Exchange exchange;
  bool connected = found.ok() && co_await tls::connect(carried->server, *carried->tls, state->server.host,
                                                       found.addresses, state->server.port, limits, exchange);
  if (!connected || carried->ended) {
    carried->end();
    co_return;
  }
  beast::get_lowest_layer(carried->server).expires_never();  // a session lives as long as it lives
  asio::co_spawn(state->strand(), copy(carried, carried->server, carried->client),
                 [task = state->task()](const std::exception_ptr&) {});
  co_await copy(carried, carried->client, carried->server);
}

awaitable<void> accept_loop(std::shared_ptr<TlsRelay::State> state, Tcp::endpoint relay) {
  for (;;) {
    boost::system::error_code error;
    Tcp::socket socket(state->strand());
    co_await state->acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, error));
    if (error == asio::error::operation_aborted || !state->acceptor.is_open()) co_return;
    if (error) continue;
    auto peer = socket.remote_endpoint(error);
    if (error || !connection_is_ours(peer, relay)) continue;  // not this process's: closed unheard
    if (state->current) state->current->end();
    socket.set_option(Tcp::no_delay(true), error);  // the C client's packets, relayed as they come
    state->current = std::make_shared<Carried>(std::move(socket), state->strand(), state->tls());
    asio::co_spawn(state->strand(), carry(state, state->current), [task = state->task()](const std::exception_ptr&) {});
  }
}

}  // namespace

TlsRelay::TlsRelay(Executor& executor, Resolver& resolver, std::function<std::shared_ptr<const TlsClient>()> tls,
                   ServerAddress server, std::chrono::milliseconds handshake_timeout,
                   const asio::ip::address_v4& listen_on)
    : state_(
          std::make_shared<State>(executor, resolver, std::move(tls), std::move(server), handshake_timeout, listen_on)),
      endpoint_(state_->acceptor.local_endpoint()) {
  asio::co_spawn(state_->strand(), accept_loop(state_, endpoint_),
                 [task = state_->task()](const std::exception_ptr&) {});
}

// Not waited for: the coroutines end at their next operation, on the state they own.
TlsRelay::~TlsRelay() { state_->stop(); }

namespace {

// A session and the relays it reaches its servers through, which must outlive it: the close goes
// through them.
class RelayedKeeper final : public ForwardingKeeper {
 public:
  RelayedKeeper(std::unique_ptr<Keeper> session, std::vector<std::unique_ptr<TlsRelay>> relays)
      : ForwardingKeeper(std::move(session)), relays_(std::move(relays)) {}
  ~RelayedKeeper() override { release_session(); }
  bool close(Clock::time_point deadline) override { return session().close(deadline); }

 private:
  std::vector<std::unique_ptr<TlsRelay>> relays_;
};

}  // namespace

TlsKeeperFactory::TlsKeeperFactory(KeeperFactory& inner, Executor& executor,
                                   std::function<std::shared_ptr<const TlsClient>()> tls, Resolver& resolver)
    : inner_(inner), executor_(executor), tls_(std::move(tls)), resolver_(resolver) {}

// The session's i-th server's relay listens on 127.0.0.(1+i): the C client tells servers apart by
// address alone, not port, and moves a session that failed over back home (Keeper::return_home)
// only to another address. Where that address cannot be bound (a narrower loopback), 127.0.0.1.
std::unique_ptr<TlsRelay> TlsKeeperFactory::open_relay(std::size_t index, const ServerAddress& server,
                                                       std::chrono::milliseconds handshake_timeout) {
  constexpr std::size_t kLoopbackAddresses = 254;  // 127.0.0.1 to 127.0.0.254
  const auto first = asio::ip::address_v4::loopback();
  if (index > 0 && index < kLoopbackAddresses) {
    try {
      asio::ip::address_v4 own(first.to_uint() + static_cast<asio::ip::address_v4::uint_type>(index));
      return std::make_unique<TlsRelay>(executor_, resolver_, tls_, server, handshake_timeout, own);
    } catch (const boost::system::system_error&) {
    }
  }
  return std::make_unique<TlsRelay>(executor_, resolver_, tls_, server, handshake_timeout, first);
}

std::unique_ptr<Keeper> TlsKeeperFactory::open(const std::vector<ServerAddress>& servers, const KeeperOptions& options,
                                               Keeper::Listener listener) {
  // A third of the session timeout, as the C client gives each server to connect.
  auto handshake_timeout = std::max(options.session_timeout / 3, std::chrono::milliseconds(1000));
  std::vector<std::unique_ptr<TlsRelay>> relays;
  std::vector<ServerAddress> through_relays;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    relays.push_back(open_relay(i, servers[i], handshake_timeout));
    auto relayed = servers[i];
    relayed.host = relays.back()->endpoint().address().to_string();
    relayed.port = relays.back()->endpoint().port();
    through_relays.push_back(std::move(relayed));
  }
  return std::make_unique<RelayedKeeper>(inner_.open(through_relays, options, std::move(listener)), std::move(relays));
}

}  // namespace zkverify::probes
