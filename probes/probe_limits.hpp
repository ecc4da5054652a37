#pragma once
// How long and how much a probe of the servers may take.

#include <chrono>
#include <cstddef>
#include <memory>
#include "probes/io.hpp"

#include "model/facts/clock.hpp"

namespace zkverify::probes {

class TlsClient;

struct ProbeLimits {
  Clock::time_point deadline;                        // the whole probe phase ends here, whatever servers do
  std::chrono::milliseconds connect_timeout{1000};   // per connection, capped by `deadline`
  std::chrono::milliseconds exchange_timeout{2000};  // per request once connected, capped by `deadline`
  std::size_t max_reply_bytes = 512 * 1024;          // a flooding peer is cut off here
  bool srvr_only = false;                            // skip the optional words and the AdminServer
  // Ask only what can change a verdict (quorum's): conf beside srvr, then mntr where it counts; ruok
  // for a server that is not serving. Otherwise, after srvr, every optional word in kOptionalWords'
  // order.
  bool verdict_words_only = false;
  // With verdict_words_only: conf after srvr's answer, not beside it, and a server reported after its
  // last word (so that a session started then is alone): a client that keeps a session open on a
  // server (the sidecar) then holds at most two connections to it.
  bool one_connection_at_a_time = false;
  std::shared_ptr<const TlsClient> tls;  // set: every word and AdminServer request goes over TLS
};

}  // namespace zkverify::probes
