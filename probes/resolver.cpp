#include "probes/resolver.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

namespace zkverify::probes {

namespace asio = boost::asio;
namespace ip = boost::asio::ip;

namespace {

ip::address address_of(const sockaddr& address) {
  if (address.sa_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    return ip::address_v4(ntohl(v4.sin_addr.s_addr));
  }
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
  ip::address_v6::bytes_type bytes;
  std::memcpy(bytes.data(), v6.sin6_addr.s6_addr, bytes.size());
  return ip::address_v6(bytes, v6.sin6_scope_id);
}

// One getaddrinfo_a request: owned by glibc from the call until its notification, which frees it.
struct LookupRequest {
  std::string name;
  addrinfo hints{};
  gaicb request{};
  std::function<void(Resolution)> done;
};

// The lookup's hints: one entry per address (not one per socket type), as Asio's resolver asks.
addrinfo lookup_hints() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  return hints;
}

Resolution resolution_of(const std::string& name, const addrinfo* found, int code) {
  if (code != 0)
    return {{},
            fmt::format("lookup of {} failed: {}", name,
                        code == EAI_SYSTEM ? std::generic_category().message(errno) : gai_strerror(code))};
  Resolution resolution;
  for (const addrinfo* entry = found; entry; entry = entry->ai_next)
    if (entry->ai_family == AF_INET || entry->ai_family == AF_INET6)
      resolution.addresses.push_back(address_of(*entry->ai_addr));
  if (!resolution.ok()) resolution.error = fmt::format("lookup of {} found no IPv4 or IPv6 address", name);
  return resolution;
}

// glibc's notification, on a thread of its own: the request's outcome, then the request is freed.
void on_looked_up(sigval value) {
  std::unique_ptr<LookupRequest> lookup(static_cast<LookupRequest*>(value.sival_ptr));
  auto resolution = resolution_of(lookup->name, lookup->request.ar_result, gai_error(&lookup->request));
  if (lookup->request.ar_result) freeaddrinfo(lookup->request.ar_result);
  lookup->done(std::move(resolution));
}

class SystemResolver final : public Resolver {
 public:
  void look_up(const std::string& name, std::function<void(Resolution)> done) override {
    auto lookup = std::make_unique<LookupRequest>();
    lookup->name = name;
    lookup->done = std::move(done);
    lookup->hints = lookup_hints();
    lookup->request.ar_name = lookup->name.c_str();
    lookup->request.ar_request = &lookup->hints;
    sigevent notify{};
    notify.sigev_notify = SIGEV_THREAD;
    notify.sigev_notify_function = &on_looked_up;
    notify.sigev_value.sival_ptr = lookup.get();
    gaicb* list[] = {&lookup->request};
    if (int code = getaddrinfo_a(GAI_NOWAIT, list, 1, &notify); code != 0) {
      lookup->done({{}, fmt::format("lookup of {} could not start: {}", name, gai_strerror(code))});
      return;
    }
    static_cast<void>(lookup.release());  // glibc's until on_looked_up
  }
};

#ifdef ZKVERIFY_THREAD_SANITIZER
// The ThreadSanitizer build's resolver: glibc starts getaddrinfo_a's threads with its internal
// pthread_create, which TSan does not see, and TSan crashes in their first malloc. So there, and
// only there, blocking getaddrinfo calls run one at a time on a pool of one thread of its own
// (Asio's: it queues, and its destructor joins once the lookup in progress returned).
class ThreadResolver final : public Resolver {
 public:
  void look_up(const std::string& name, std::function<void(Resolution)> done) override {
    asio::post(worker_, [name, done = std::move(done)] { done(look_up_now(name)); });
  }

 private:
  asio::thread_pool worker_{1};
};
#endif

// The lookups of one resolve_all: the results arrive on its strand; the first of "all in" and the
// deadline delivers them.
class Batch : public std::enable_shared_from_this<Batch> {
 public:
  Batch(const asio::any_io_executor& executor, std::vector<std::string> hosts,
        std::function<void(std::vector<Resolution>)> done)
      : strand_(asio::make_strand(executor)),
        deadline_(strand_),
        hosts_(std::move(hosts)),
        results_(hosts_.size()),
        done_(std::move(done)) {}

  // Touches nothing that arrive() and deliver() change once the first lookup or the timer can fire.
  void start(Resolver& resolver, Clock::time_point deadline) {
    std::vector<std::size_t> names;
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      if (auto numeric = numeric_resolution(hosts_[i])) results_[i] = std::move(*numeric);
      else names.push_back(i);
    }
    left_ = names.size();
    if (names.empty()) return asio::post(strand_, [self = shared_from_this()] { self->deliver(); });
    deadline_.expires_at(deadline);
    deadline_.async_wait([self = shared_from_this()](const boost::system::error_code&) { self->deliver(); });
    for (auto i : names)
      resolver.look_up(hosts_[i], [self = shared_from_this(), i](Resolution resolution) {
        asio::post(self->strand_,
                   [self, i, resolution = std::move(resolution)]() mutable { self->arrive(i, std::move(resolution)); });
      });
  }

 private:
  void arrive(std::size_t i, Resolution resolution) {
    if (delivered_ || results_[i]) return;
    results_[i] = std::move(resolution);
    if (--left_ == 0) deliver();
  }
  void deliver() {
    if (delivered_) return;
    delivered_ = true;
    deadline_.cancel();
    std::vector<Resolution> out;
    for (std::size_t i = 0; i < hosts_.size(); ++i)
      out.push_back(results_[i]
                        ? std::move(*results_[i])
                        : Resolution{{}, fmt::format("lookup of {} did not finish within the deadline", hosts_[i])});
    done_(std::move(out));
  }

  asio::strand<asio::any_io_executor> strand_;
  asio::steady_timer deadline_;
  std::vector<std::string> hosts_;
  std::vector<std::optional<Resolution>> results_;
  std::size_t left_ = 0;
  bool delivered_ = false;
  std::function<void(std::vector<Resolution>)> done_;
};

}  // namespace

std::optional<Resolution> numeric_resolution(const std::string& host) {
  boost::system::error_code not_numeric;
  auto address = ip::make_address(host, not_numeric);
  if (not_numeric) return std::nullopt;
  return Resolution{{address}, {}};
}

Resolution look_up_now(const std::string& host) {
  if (auto numeric = numeric_resolution(host)) return *numeric;
  addrinfo hints = lookup_hints();
  addrinfo* found = nullptr;
  int code = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  Resolution resolution = resolution_of(host, found, code);
  if (found) freeaddrinfo(found);
  return resolution;
}

Resolver& system_resolver() {
#ifdef ZKVERIFY_THREAD_SANITIZER
  static ThreadResolver resolver;
#else
  static SystemResolver resolver;  // stateless
#endif
  return resolver;
}

void resolve_all(const asio::any_io_executor& executor, Resolver& resolver, std::vector<std::string> hosts,
                 Clock::time_point deadline, std::function<void(std::vector<Resolution>)> done) {
  std::make_shared<Batch>(executor, std::move(hosts), std::move(done))->start(resolver, deadline);
}

}  // namespace zkverify::probes
