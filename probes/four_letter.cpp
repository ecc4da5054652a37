#include "probes/four_letter.hpp"

#include <future>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "model/parse/parsers.hpp"
#include "probes/actor.hpp"
#include "probes/admin_http.hpp"
#include "probes/tcp.hpp"
#include "probes/word_exchange.hpp"

namespace zkverify::probes {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::awaitable;

namespace {

// The exchange's steps, kept for --trace.
void note_steps(ServerProbe& probe, const std::string& what, const Exchange& exchange) {
  auto steps = steps_of(probe.address.name, what, exchange);
  probe.steps.insert(probe.steps.end(), steps.begin(), steps.end());
}

template <class Facts>
void note_refusal(const std::optional<Reply<Facts>>& reply, const std::string& word, ServerProbe& probe) {
  if (reply && reply->error == ProbeError::not_whitelisted) probe.refused_words.push_back(word);
}

// Keeps what an optional word's exchange told. False when the exchange failed: the server went
// away or stalls, so nothing more should be asked of it.
bool keep_optional(ServerProbe& probe, const std::string& word, const Exchange& exchange) {
  note_steps(probe, word, exchange);
  if (exchange.error != ProbeError::ok) return false;
  if (word == "mntr") note_refusal(probe.mntr = parse_mntr(exchange.reply), word, probe);
  else if (word == "conf") note_refusal(probe.conf = parse_conf(exchange.reply), word, probe);
  else if (word == "isro") note_refusal(probe.isro = parse_isro(exchange.reply), word, probe);
  else if (word == "ruok") note_refusal(probe.ruok = parse_ruok(exchange.reply), word, probe);
  return true;
}

// Asks one optional word and keeps what it told; false when the exchange failed (keep_optional).
awaitable<bool> ask_optional(ServerProbe& probe, const std::vector<asio::ip::address>& addresses,
                             const std::string& word, const ProbeLimits& limits) {
  // Named, never braced temporaries as a coroutine's arguments: GCC 12 destroys those twice.
  WordTarget target{probe.address.host, addresses, probe.address.port};
  auto exchange = co_await exchange_word(target, word, limits);  // named: GCC 12
  co_return keep_optional(probe, word, exchange);
}

// A word asked on a connection of its own while the caller asks another of the same server (two
// connections at once: within the budget of two per server). Started on construction; result()
// awaits its exchange, which ends by the limits' deadline like any other.
class WordInFlight {
 public:
  WordInFlight(const asio::any_io_executor& executor, WordTarget target, std::string word, const ProbeLimits& limits)
      : state_(std::make_shared<State>(executor)) {
    asio::co_spawn(executor, exchange_word(std::move(target), std::move(word), limits),
                   [state = state_](const std::exception_ptr& error, Exchange exchange) {
                     if (error) {  // out of memory, say: the word is as good as unanswered
                       exchange.error = ProbeError::reset;
                       exchange.detail = "the exchange failed inside zkverify";
                     }
                     state->exchange = std::move(exchange);
                     state->ended.cancel();
                   });
  }
  awaitable<Exchange> result() {
    if (!state_->exchange) {
      boost::system::error_code ignored;  // cancelled when the exchange ends: the wake-up
      co_await state_->ended.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    co_return std::move(*state_->exchange);
  }

 private:
  struct State {
    explicit State(const asio::any_io_executor& executor) : ended(executor, asio::steady_timer::time_point::max()) {}
    asio::steady_timer ended;
    std::optional<Exchange> exchange;
  };
  std::shared_ptr<State> state_;
};

// mntr can change a verdict only through the leader's synced followers, or through the voters'
// count (zk_quorum_size) when no membership is known.
bool mntr_counts(const ServerProbe& probe) {
  return mode_of(probe) == Mode::leader || !has_facts(probe.conf) || probe.conf->facts.members.empty();
}

// The words after srvr that can change the verdict, cheapest decision first: for a server that
// answered with a mode, conf (its id and the membership, compared across servers; asked beside
// srvr, so `conf` is its exchange), then mntr where it counts; isro adds nothing to srvr's mode
// ("read-only"). For one that is not serving, only ruok: the others answer that it is not
// serving, and ruok's imok is worth a note (conf's answer is dropped: it decides nothing there).
awaitable<void> ask_verdict_words(ServerProbe& probe, const std::vector<asio::ip::address>& addresses,
                                  const Exchange& conf, const ProbeLimits& limits) {
  // Named strings, and no co_await inside a condition: written with "conf" temporaries awaited in
  // `if (!co_await ...)`, this coroutine died of SIGILL when built with GCC 12.
  static const std::string conf_word = "conf", mntr = "mntr", ruok = "ruok";
  bool not_serving = probe.srvr && probe.srvr->error == ProbeError::not_serving;
  bool answered = false;
  if (mode_of(probe)) answered = keep_optional(probe, conf_word, conf);
  else if (not_serving) co_await ask_optional(probe, addresses, ruok, limits);
  if (answered && mntr_counts(probe)) co_await ask_optional(probe, addresses, mntr, limits);
}

// Fills what the four-letter words could not tell from the AdminServer, at the same addresses.
awaitable<void> probe_admin(ServerProbe& probe, const std::vector<asio::ip::address>& addresses,
                            const ProbeLimits& limits) {
  auto admin = probe.address;
  admin.port = *probe.address.admin_port;
  bool gave_up = false;  // after a transport failure (it stalls, floods, resets): ask nothing more, keep its error
  auto fetch = [&](const char* command) -> awaitable<std::optional<std::string>> {
    if (gave_up) co_return std::nullopt;
    auto exchange = co_await fetch_admin_command(admin, addresses, command, limits);
    note_steps(probe, fmt::format("AdminServer /commands/{}", command), exchange);
    if (exchange.error != ProbeError::ok) {
      probe.admin_error = fmt::format("AdminServer {} /commands/{}: {}", admin.endpoint(), command, describe(exchange));
      gave_up = exchange.error != ProbeError::http_error;
      co_return std::nullopt;
    }
    co_return std::move(exchange.reply);
  };
  if (!has_facts(probe.mntr) && (!limits.verdict_words_only || mntr_counts(probe))) {
    if (auto body = co_await fetch("monitor")) {
      probe.mntr = parse_admin_monitor(*body);
    }
  }
  if (!has_facts(probe.conf)) {
    auto conf_body = co_await fetch("configuration");
    auto view_body = co_await fetch("voting_view");
    if (conf_body || view_body) {
      auto conf = conf_body ? parse_admin_conf(*conf_body) : Reply<ConfFacts>{};
      auto view = view_body ? parse_admin_voting_view(*view_body) : Reply<ConfFacts>{};
      if (conf.error == ProbeError::ok && view.error == ProbeError::ok)
        conf.facts.members = std::move(view.facts.members);
      probe.conf = conf.error == ProbeError::ok ? std::move(conf) : std::move(view);
    }
  }
}

// srvr, kept in the probe: its exchange, and what it told when the exchange succeeded.
awaitable<void> ask_srvr(ServerProbe& probe, const std::vector<asio::ip::address>& addresses,
                         const ProbeLimits& limits) {
  static const std::string srvr = "srvr";                                // named: GCC 12 and coroutine temporaries
  WordTarget target{probe.address.host, addresses, probe.address.port};  // named: GCC 12
  probe.srvr_exchange = co_await exchange_word(target, srvr, limits);
  note_steps(probe, srvr, probe.srvr_exchange);
  if (probe.srvr_exchange.error == ProbeError::ok) probe.srvr = parse_srvr(probe.srvr_exchange.reply);
}

// A word the server may have cut off for being one connection too many from this address
// (maxClientCnxns: ZooKeeper closes such a connection at once, without a reply), or reset.
bool maybe_over_the_limit(const Exchange& exchange) {
  return (exchange.error == ProbeError::ok && exchange.reply.empty()) || exchange.error == ProbeError::reset;
}

// srvr and, beside it, conf (quorum's verdict words); `on_srvr` runs once srvr is in. Another
// client from this address may hold a connection, so a word cut off while the other was in flight
// is asked again alone: one word's time more, never a false "unreachable". Over TLS conf waits for
// srvr instead: its handshake then resumes srvr's TLS session, a fraction of a full handshake's cost
// on both sides (the full ones are most of a TLS gate's time); so it does one connection at a time.
// Returns conf's exchange (an empty one when, asked in turn, srvr did not answer: the caller asks
// nothing more then).
awaitable<Exchange> ask_srvr_and_conf(ServerProbe& probe, const std::vector<asio::ip::address>& addresses,
                                      const ProbeLimits& limits, const ProbedCallback& on_srvr) {
  static const std::string conf_word = "conf";  // named: GCC 12 and coroutine temporaries
  auto executor = co_await asio::this_coro::executor;
  WordTarget target{probe.address.host, addresses, probe.address.port};
  std::optional<Exchange> conf_exchange;
  if (limits.tls || limits.one_connection_at_a_time) {
    co_await ask_srvr(probe, addresses, limits);
    if (on_srvr) on_srvr(probe);
    if (!probe.srvr) co_return Exchange{};
    conf_exchange = co_await exchange_word(target, conf_word, limits);
  } else {
    WordInFlight conf(executor, target, conf_word, limits);
    co_await ask_srvr(probe, addresses, limits);
    if (maybe_over_the_limit(probe.srvr_exchange)) {
      conf_exchange = co_await conf.result();
      co_await ask_srvr(probe, addresses, limits);
    }
    if (on_srvr) on_srvr(probe);
    if (!conf_exchange) conf_exchange = co_await conf.result();
  }
  if (mode_of(probe) && maybe_over_the_limit(*conf_exchange))  // beside the session, if one started
    conf_exchange = co_await exchange_word(target, conf_word, limits);
  co_return std::move(*conf_exchange);
}

// srvr, then the other words; `on_srvr` runs once srvr's exchange ended (or the lookup failed).
// For the verdict words, conf is asked beside srvr: most servers need nothing more.
awaitable<void> probe_one(ServerProbe& probe, tcp::Lookup lookup, ProbeLimits limits, const ProbedCallback& on_srvr) {
  auto found = co_await lookup.result();
  if (!found.ok()) {
    probe.srvr_exchange = tcp::unresolved(found);
    if (on_srvr) on_srvr(probe);
    co_return;
  }
  const auto& addresses = found.addresses;
  if (limits.verdict_words_only && !limits.srvr_only) {
    auto conf = co_await ask_srvr_and_conf(probe, addresses, limits, on_srvr);
    if (!probe.srvr) co_return;
    co_await ask_verdict_words(probe, addresses, conf, limits);
  } else {
    co_await ask_srvr(probe, addresses, limits);
    if (on_srvr) on_srvr(probe);
    if (!probe.srvr || limits.srvr_only) co_return;
    for (const auto& word : kOptionalWords) {
      bool answered = co_await ask_optional(probe, addresses, word, limits);
      if (!answered) break;
    }
  }
  if (probe.address.admin_port) co_await probe_admin(probe, addresses, limits);
}

// quorum's probe (verdict words) reports a server once srvr is in: the session that starts then is
// its second connection, beside one word at a time. Otherwise (and one connection at a time) after
// the last word.
awaitable<void> probe_then_report(ServerProbe& probe, tcp::Lookup lookup, ProbeLimits limits,
                                  const ProbedCallback& on_probed) {
  if (limits.verdict_words_only && !limits.one_connection_at_a_time) {
    co_await probe_one(probe, lookup, limits, on_probed);
    co_return;
  }
  const ProbedCallback none;  // named: a temporary bound to a coroutine's reference parameter
  co_await probe_one(probe, lookup, limits, none);
  if (on_probed) on_probed(probe);
}

awaitable<Exchange> ask(tcp::Lookup lookup, std::string host, std::uint16_t port, std::string word,
                        ProbeLimits limits) {
  auto found = co_await lookup.result();
  if (!found.ok()) co_return tcp::unresolved(found);
  WordTarget target{std::move(host), std::move(found.addresses), port};  // named: GCC 12
  co_return co_await exchange_word(std::move(target), std::move(word), limits);
}

awaitable<Exchange> ask_admin_at(tcp::Lookup lookup, ServerAddress admin, std::string command, ProbeLimits limits) {
  auto found = co_await lookup.result();
  if (!found.ok()) co_return tcp::unresolved(found);
  co_return co_await fetch_admin_command(std::move(admin), std::move(found.addresses), std::move(command), limits);
}

// The connect deadline also bounds the lookup: it is the first step of connecting.
Clock::time_point lookup_deadline(const ProbeLimits& limits) {
  return tcp::deadline_after(limits.connect_timeout, limits);
}

}  // namespace

namespace {

// One start_probe_servers as an actor (probes/actor.hpp): its servers' probes and lookups, touched by
// their coroutines on its strand, each coroutine holding a Task (so a caller that stopped waiting
// leaves them what they use).
struct ProbeRun : ActorCore {
  ProbeRun(Executor& executor, ProbedCallback probed, std::function<void(std::vector<ServerProbe>)> end)
      : ActorCore(executor), backstop(strand()), on_probed(std::move(probed)), done(std::move(end)) {
    // The coroutines hold a Task of this run while they use it.
    reporter = [this](const ServerProbe& probe) { report(probe); };
  }
  // Once: every probe as it stands.
  void finish() {
    if (finished) return;
    finished = true;
    backstop.cancel();
    done(probes);
  }
  // A stop ends the run at once (the exchanges end by their own deadlines).
  void on_stop() override { finish(); }
  // Called as each server is reported; never after `done`, whatever the callback touches may be
  // gone once the caller has the probes.
  void report(const ServerProbe& probe) const {
    if (on_probed && !finished) on_probed(probe);
  }
  asio::steady_timer backstop;
  std::vector<ServerProbe> probes;
  std::vector<tcp::Lookup> lookups;
  ProbedCallback on_probed;
  ProbedCallback reporter;  // report(), for the coroutines, which take it by reference
  std::function<void(std::vector<ServerProbe>)> done;
  std::size_t left = 0;
  bool finished = false;
};

// A result handed from the executor to the thread that waits for it.
template <class R>
R awaited(std::future<R>& result, Clock::time_point bound) {
  if (result.wait_until(bound) != std::future_status::ready)
    throw std::logic_error("a probe outlived its own deadline");  // every socket and lookup has one: a bug
  return result.get();
}

}  // namespace

std::function<void()> start_probe_servers(Executor& executor, const std::vector<ServerAddress>& servers,
                                          const ProbeLimits& limits, Resolver& resolver, ProbedCallback on_probed,
                                          std::function<void(std::vector<ServerProbe>)> done) {
  auto run = std::make_shared<ProbeRun>(executor, std::move(on_probed), std::move(done));
  run->probes.resize(servers.size());
  run->left = servers.size();
  for (std::size_t i = 0; i < servers.size(); ++i) {
    run->probes[i].address = servers[i];
    run->probes[i].srvr_exchange.error = ProbeError::connect_timeout;  // until the exchange says otherwise
    run->probes[i].srvr_exchange.detail = "not probed before the deadline";
    run->lookups.emplace_back(run->strand(), resolver, servers[i].host, lookup_deadline(limits));
  }
  tell(run, [run, limits](ProbeRun& self) {
    if (self.left == 0) return self.finish();
    // Every lookup and every socket already ends by limits.deadline; this is a backstop.
    self.backstop.expires_at(limits.deadline + std::chrono::milliseconds(200));
    self.backstop.async_wait([run, task = self.task()](const boost::system::error_code&) { run->finish(); });
    for (std::size_t i = 0; i < self.probes.size(); ++i)
      asio::co_spawn(self.strand(), probe_then_report(self.probes[i], self.lookups[i], limits, self.reporter),
                     [run, task = self.task()](const std::exception_ptr&) {
                       if (--run->left == 0) run->finish();
                     });
  });
  return [run] { run->stop(); };
}

std::vector<ServerProbe> probe_servers(Executor& executor, const std::vector<ServerAddress>& servers,
                                       const ProbeLimits& limits, Resolver& resolver, ProbedCallback on_probed) {
  auto promise = std::make_shared<std::promise<std::vector<ServerProbe>>>();
  auto result = promise->get_future();
  start_probe_servers(executor, servers, limits, resolver, std::move(on_probed),
                      [promise](std::vector<ServerProbe> probes) { promise->set_value(std::move(probes)); });
  return awaited(result, limits.deadline + std::chrono::seconds(2));
}

namespace {

// One coroutine on a strand of its own, its result (or exception) awaited by the calling thread.
Exchange exchange_now(Executor& executor, const std::function<awaitable<Exchange>(asio::any_io_executor)>& start,
                      Clock::time_point bound) {
  auto promise = std::make_shared<std::promise<Exchange>>();
  auto result = promise->get_future();
  auto strand = asio::make_strand(executor.io().get_executor());
  asio::co_spawn(strand, start(strand), [promise](const std::exception_ptr& error, Exchange exchange) {
    if (error) promise->set_exception(error);
    else promise->set_value(std::move(exchange));
  });
  return awaited(result, bound);
}

}  // namespace

Exchange ask_word(Executor& executor, const ServerAddress& server, std::string_view word, const ProbeLimits& limits,
                  Resolver& resolver) {
  return exchange_now(
      executor,
      [&, word = std::string(word)](const asio::any_io_executor& strand) {
        return ask(tcp::Lookup(strand, resolver, server.host, lookup_deadline(limits)), server.host, server.port, word,
                   limits);
      },
      limits.deadline + std::chrono::seconds(2));
}

Exchange ask_admin(Executor& executor, const ServerAddress& server, std::string_view command, const ProbeLimits& limits,
                   Resolver& resolver) {
  auto admin = server;
  admin.port = server.admin_port.value();
  return exchange_now(
      executor,
      [&, command = std::string(command)](const asio::any_io_executor& strand) {
        return ask_admin_at(tcp::Lookup(strand, resolver, server.host, lookup_deadline(limits)), admin, command,
                            limits);
      },
      limits.deadline + std::chrono::seconds(2));
}

}  // namespace zkverify::probes
