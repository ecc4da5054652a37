#pragma once
// Host names to addresses within a deadline, whatever DNS does. getaddrinfo can neither be given a
// timeout nor interrupted, and Asio's resolver runs lookups one after another on one hidden thread
// that its io_context joins when destroyed: one slow name would delay every name behind it and the
// process's exit. So each name is looked up on a thread of its own, awaited until the deadline and
// abandoned after it (the thread owns everything it touches). A numeric host is never looked up.

#include "probes/io.hpp"
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "model/facts/clock.hpp"

namespace zkverify::probes {

// What a host stands for: its addresses, or why there are none.
struct Resolution {
  std::vector<boost::asio::ip::address> addresses;  // in the resolver's order (the order to try)
  // Why `addresses` is empty: "lookup of NAME failed: ...", "lookup of NAME did not finish within
  // the deadline".
  std::string error;
  [[nodiscard]] bool ok() const { return !addresses.empty(); }
};

// A numeric host (an IPv4 or IPv6 literal) as the Resolution it stands for, with no lookup; none
// for a name.
std::optional<Resolution> numeric_resolution(const std::string& host);

// The seam: probe_servers takes one, so tests can make one name slow.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // The addresses `host` stands for. Returns by `deadline` (give or take a thread wake-up), whatever
  // the lookup does. Safe to call from several threads at once.
  virtual Resolution resolve(const std::string& host, Clock::time_point deadline) = 0;
};

// Looks one name up, blocking for as long as that takes: getaddrinfo, or a test's stand-in.
using LookupFunction = std::function<Resolution(const std::string& name)>;

// Numeric hosts (IPv4 and IPv6 literals) resolve to themselves at once. Each name is looked up by
// `lookup` on a detached thread of its own (with its own copy of `lookup` and of the name) and
// awaited until the deadline; a lookup still running then is abandoned and reported as not
// finished within the deadline.
class ThreadedResolver final : public Resolver {
 public:
  explicit ThreadedResolver(LookupFunction lookup) : lookup_(std::move(lookup)) {}
  Resolution resolve(const std::string& host, Clock::time_point deadline) override;

 private:
  LookupFunction lookup_;
};

// getaddrinfo (TCP, IPv4 and IPv6, only families the machine has an address of), as Asio's
// resolver asked it, behind a ThreadedResolver.
Resolver& system_resolver();

// Resolves every host at once, each name on a thread of its own (numeric hosts on the caller's),
// and returns by the deadline one Resolution per host, in order: a slow name costs only its own
// result.
std::vector<Resolution> resolve_all(Resolver& resolver, const std::vector<std::string>& hosts,
                                    Clock::time_point deadline);

}  // namespace zkverify::probes
