#include "verifier/commands/help_text.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace zkverify::verifier {
namespace {

// Every example uses the kubernetes-kafka names: StatefulSets pzoo (ids 1-3) and zoo (ids 4-5).
constexpr std::string_view kServersLine =
    "  $ export ZK=pzoo-0=pzoo-0.pzoo:2181,pzoo-1=pzoo-1.pzoo:2181,pzoo-2=pzoo-2.pzoo:2181,"
    "zoo-0=zoo-0.zoo:2181,zoo-1=zoo-1.zoo:2181\n";

constexpr std::string_view kUsageCodes =
    "  64  usage error: a bad flag or value, an unreadable --state file (one line on stderr names it)\n"
    "  70  internal error: a bug in zkverify; the ensemble was not verified\n";

constexpr std::string_view kIoCode = "  74  I/O error: an output file (--state, --junit, --report) cannot be written\n";

struct Footer {
  std::string_view command;
  std::string_view examples;  // lines after kServersLine
  std::string_view codes;     // the command's own, before 64 and 70
  bool writes_files = true;
};

constexpr std::array kFooters{
    Footer{"quorum",
           "  $ zkverify quorum --servers \"$ZK\" --state /var/lib/zkverify/ledger.json\n"
           "      the gate between two manual steps: exit 0 only when it is safe to go on\n"
           "  $ zkverify quorum --servers \"$ZK\" --state ledger.json --wait 5m\n"
           "      after a restart: wait until healthy 3 checks in a row\n",
           "  0   healthy: every server serves, one leader, the write read back everywhere\n"
           "  1   degraded: the quorum holds but something is wrong; do not restart another server\n"
           "  2   critical: no quorum, no leader or several, the round trip failed, or data loss\n"},
    Footer{"order",
           "  $ zkverify order --servers \"$ZK\"\n"
           "      the order to restart in: down servers first, then observers, followers, the leader last\n"
           "  $ zkverify order --servers \"$ZK\" --to new/zoo.cfg\n"
           "      the same, and exit 1 when restarting in it onto new/zoo.cfg's list could elect two leaders\n",
           "  0   the order was printed (a warning on stderr when the ensemble is not healthy)\n"
           "  1   with --to: a step of the order could elect two leaders, or no server reported its list\n"
           "      (the order is still printed; the step and the reason on stderr)\n",
           false},
    Footer{"safe-to-restart",
           "  $ for s in $(zkverify order --servers \"$ZK\"); do\n"
           "  >   zkverify safe-to-restart --servers \"$ZK\" \"$s\" && kubectl delete pod \"$s\" &&\n"
           "  >   zkverify quorum --servers \"$ZK\" --wait 5m || break; done\n",
           "  0   safe: without NAME, a majority of voters still serves and is proven synced\n"
           "  1   not safe now (the reason on stdout)\n"
           "  2   the ensemble is critical\n"},
    Footer{"plan",
           "  $ zkverify plan --servers \"$ZK\" --to new/zoo.cfg\n"
           "      the way to new/zoo.cfg's membership (zoo-2, zoo-3 added, say), one voter a step,\n"
           "      each step's list and what to start, restart and stop, and the gate between\n",
           "  0   the plan was printed (or nothing is to change)\n"
           "  1   no plan now: the servers hold several lists, or none reported its list (the reason on stdout)\n"
           "  2   the ensemble is critical\n",
           false},
    Footer{"watch",
           "  $ zkverify watch --servers \"$ZK\" --duration 30m\n"
           "      client sessions that write all through a manual upgrade; Ctrl-C ends it early\n",
           "  0   no session expired, no acknowledged write lost, no window over --max-unavailable\n"
           "  2   a session expired, a write was lost, or the watch could not start\n",
           false},
    Footer{"step",
           "  $ zkverify step --servers \"$ZK\" --restart pzoo-1 -- kubectl delete pod pzoo-1\n"
           "      one restart, verified before, during and after; COMMAND only after --\n",
           "  0   the step was safe, the server came back and caught up, clients came through\n"
           "  1   not started (not safe), not restarted, not healthy in time, or interrupted\n"
           "  2   critical afterwards, a session expired or a write was lost\n"},
    Footer{"roll",
           "  $ zkverify roll --servers \"$ZK\" --state ledger.json --dry-run -- kubectl delete pod {}\n"
           "      the plan and the pre-checks; nothing is run\n"
           "  $ zkverify roll --servers \"$ZK\" --state ledger.json --report roll.html -- kubectl delete pod {}\n"
           "      every server in order, each as a step; a stopped roll resumes where it stopped\n",
           "  0   every step was clean\n"
           "  1   stopped (a step failed, a signal) or degraded; --dry-run: a step would not be safe\n"
           "  2   critical, a session expired or a write was lost\n"},
    Footer{"serve",
           "  $ zkverify serve --servers \"$ZK\" --listen :9181\n"
           "      the readiness sidecar of this pod's server (--local defaults to the host name):\n"
           "      readinessProbe httpGet /readyz on 9181; Prometheus scrapes /metrics\n",
           "  0   stopped by SIGTERM or SIGINT\n", false},
    Footer{"probe",
           "  $ zkverify probe --servers \"$ZK\" --local pzoo-0\n"
           "      an exec readiness probe: this server serves and has caught up\n",
           "  0   ready\n"
           "  1   not ready (the reason on stdout)\n",
           false},
    Footer{"smoke",
           "  $ zkverify smoke --servers \"$ZK\" --wait 2m --junit smoke.xml\n"
           "      a CI smoke check of the whole ensemble, cases as JUnit XML\n",
           "  0   every case passed (or was not applicable)\n"
           "  1   a case failed, or the run was interrupted\n"
           "  2   no listed server serves, or --wait ran out\n"},
};

}  // namespace

std::string command_footer(std::string_view command) {
  for (const auto& footer : kFooters)
    if (footer.command == command)
      return fmt::format("Examples:\n{}{}\nExit status:\n{}{}{}", kServersLine, footer.examples, footer.codes,
                         kUsageCodes, footer.writes_files ? kIoCode : "");
  return "";
}

std::string top_level_footer() {
  return fmt::format(
      "Examples:\n"
      "  a rolling restart, one server at a time, each step a verified gate:\n{}"
      "  $ zkverify order --servers \"$ZK\"\n"
      "  $ zkverify safe-to-restart --servers \"$ZK\" pzoo-0 && kubectl delete pod pzoo-0\n"
      "  $ zkverify quorum --servers \"$ZK\" --wait 5m\n"
      "  $ zkverify help COMMAND\n"
      "\nExit status:\n"
      "  0   healthy: safe to go on\n"
      "  1   degraded\n"
      "  2   critical\n{}{}",
      kServersLine, kUsageCodes, kIoCode);
}

}  // namespace zkverify::verifier
