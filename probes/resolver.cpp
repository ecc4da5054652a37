#include "probes/resolver.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <system_error>
#include <thread>

#include <fmt/format.h>

namespace zkverify::probes {

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

std::string lookup_error(int code) {
  // errno is the thread's own, so it still holds getaddrinfo's system error here.
  return code == EAI_SYSTEM ? std::generic_category().message(errno) : gai_strerror(code);
}

Resolution getaddrinfo_lookup(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one entry per address, not one per socket type
  hints.ai_flags = AI_ADDRCONFIG;   // what Asio's resolver asked for by default
  addrinfo* found = nullptr;
  if (int code = getaddrinfo(name.c_str(), nullptr, &hints, &found); code != 0)
    return {{}, fmt::format("lookup of {} failed: {}", name, lookup_error(code))};
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  Resolution resolution;
  for (const addrinfo* entry = found; entry; entry = entry->ai_next)
    if (entry->ai_family == AF_INET || entry->ai_family == AF_INET6)
      resolution.addresses.push_back(address_of(*entry->ai_addr));
  if (!resolution.ok()) resolution.error = fmt::format("lookup of {} found no IPv4 or IPv6 address", name);
  return resolution;
}

}  // namespace

std::optional<Resolution> numeric_resolution(const std::string& host) {
  boost::system::error_code not_numeric;
  auto address = ip::make_address(host, not_numeric);
  if (not_numeric) return std::nullopt;
  return Resolution{{address}, {}};
}

Resolution ThreadedResolver::resolve(const std::string& host, Clock::time_point deadline) {
  if (auto numeric = numeric_resolution(host)) return std::move(*numeric);

  // Detached, never joined: the thread owns the promise, its copy of the lookup and of the name,
  // so abandoning it at the deadline leaves it nothing of ours to touch when it finishes. An
  // exception goes to the waiter (an escaping one would end the process).
  std::promise<Resolution> promise;
  auto result = promise.get_future();
  std::thread([lookup = lookup_, host, promise = std::move(promise)]() mutable {
    try {
      promise.set_value(lookup(host));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_until(deadline) != std::future_status::ready)
    return {{}, fmt::format("lookup of {} did not finish within the deadline", host)};
  return result.get();
}

Resolver& system_resolver() {
  static ThreadedResolver resolver(getaddrinfo_lookup);
  return resolver;
}

std::vector<Resolution> resolve_all(Resolver& resolver, const std::vector<std::string>& hosts,
                                    Clock::time_point deadline) {
  std::vector<std::future<Resolution>> lookups;
  for (const auto& host : hosts) {
    // A numeric host has no lookup to wait for: resolved when awaited, on this thread (a check
    // resolves every listed host again for each session, and a thread costs more than that).
    auto policy = numeric_resolution(host) ? std::launch::deferred : std::launch::async;
    lookups.push_back(std::async(policy, [&resolver, &host, deadline] { return resolver.resolve(host, deadline); }));
  }
  // Each resolve returns by the deadline, so these waits end by it too.
  std::vector<Resolution> resolutions;
  for (auto& lookup : lookups) resolutions.push_back(lookup.get());
  return resolutions;
}

}  // namespace zkverify::probes
