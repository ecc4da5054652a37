#pragma once
// Host names to addresses within a deadline, whatever DNS does. getaddrinfo can neither be given a
// timeout nor interrupted, and Asio's resolver runs lookups one after another on one hidden thread:
// one slow name would delay every name behind it. So names are looked up with glibc's
// getaddrinfo_a, every one at once and none on a thread of ours, awaited on the executor until the
// deadline and abandoned after it. A numeric host is never looked up.

#include <functional>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include <boost/asio/any_io_executor.hpp>
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

// Looks `host` up now, blocking (getaddrinfo, as the system resolver asks): only for a thread that
// may block, such as the C client's own, which looks its names up the same way.
Resolution look_up_now(const std::string& host);

// The seam: tests make a name slow, missing or never answered.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // Starts looking `name` up (never a numeric host) and returns; `done` runs once with the outcome,
  // on any thread, possibly long after the caller stopped waiting: it must own what it touches and
  // must not block.
  virtual void look_up(const std::string& name, std::function<void(Resolution)> done) = 0;
};

// getaddrinfo_a (TCP, IPv4 and IPv6, only families the machine has an address of): glibc's own
// threads do the lookup and notify us. It keeps no state: one for the process.
Resolver& system_resolver();

// Resolves every host at once and calls `done` once, on `executor`, with one Resolution per host in
// order, by the deadline: a name still being looked up then is reported as not finished within the
// deadline and abandoned, so a slow name costs only its own result. Numeric hosts need no lookup.
void resolve_all(const boost::asio::any_io_executor& executor, Resolver& resolver, std::vector<std::string> hosts,
                 Clock::time_point deadline, std::function<void(std::vector<Resolution>)> done);

}  // namespace zkverify::probes
