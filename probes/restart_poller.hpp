#pragma once
// Every server's srvr, polled ten times a second on the executor while one server restarts, each
// poll fed to a RestartTimeline (model/books/restart_timeline.hpp): when that server stopped and
// started serving again, whether it really restarted, and who led when. An actor
// (probes/actor.hpp): the timeline lives on its strand; this class is the command's handle on it.

#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "probes/io.hpp"

#include "model/books/restart_timeline.hpp"
#include "probes/executor.hpp"
#include "probes/tls.hpp"

namespace zkverify::probes {

class RestartPoller {
 public:
  // Starts polling at once; `leader_before` is the leader the check before the step saw.
  // `tls`: the polls' TLS client, none for plain TCP.
  RestartPoller(Executor& executor, std::vector<ServerAddress> servers, std::string target,
                std::optional<std::string> leader_before, std::shared_ptr<const TlsClient> tls);
  ~RestartPoller();  // stop()s
  RestartPoller(const RestartPoller&) = delete;
  RestartPoller& operator=(const RestartPoller&) = delete;

  // No poll starts after it returns; one in flight is waited for (its own deadline, 300 ms).
  // Idempotent.
  void stop();

  // While a Pause lives no poll starts, and one in flight was waited for: whoever else probes the
  // servers holds one, so the poller's connection never adds to theirs (deployments allow 3
  // connections per client address: maxClientCnxns).
  class Pause {
   public:
    explicit Pause(RestartPoller& poller);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    RestartPoller& poller_;
  };

  // What the polls saw so far, a downtime still running counted until now.
  [[nodiscard]] StepTimeline timeline() const;

  struct State;  // the actor, owned with the polls in flight (restart_poller.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace zkverify::probes
