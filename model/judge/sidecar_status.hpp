#pragma once
// What the sidecar knows after its cycles, as plain data: the last cycle's report and the local
// readiness. The cycle loop fills it; the pages (metrics, status page, readyz) only read it.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/judge/readiness.hpp"
#include "model/judge/report.hpp"

namespace zkverify {

struct CycleResult {
  Report report;
  Readiness readiness;
  std::chrono::system_clock::time_point checked_at{};  // when the cycle ended
  std::chrono::duration<double> duration{0};           // how long the cycle took
  std::optional<double> round_trip_seconds;            // the local session's sync + read, when it read
};

// What became of one --clients path's registrations between cycles, since the sidecar started.
struct ClientTally {
  std::uint64_t renewed = 0;  // held by a new session: the old one ended
  std::uint64_t gone = 0;     // not there at the next cycle that read the path
};

struct SidecarStatus {
  std::string local;                                     // this pod's server
  std::string ensemble;                                  // --ensemble: a label on every metric; none when empty
  std::optional<CycleResult> last;                       // none until the first cycle ends
  std::uint64_t cycles = 0;                              // cycles ended
  std::vector<ClientPathRead> clients_seen;              // --clients: each path's last registrations read
  std::map<std::string, ClientTally> clients;            // --clients: by path, once a cycle read it
  std::map<std::string, Registration> clients_departed;  // --clients: gone, by registration path, until back
};

}  // namespace zkverify
