#include "verifier/quorum_command.hpp"

#include <unistd.h>

#include <ostream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "probes/four_letter.hpp"
#include "probes/round_trip.hpp"
#include "verifier/render.hpp"

namespace zkverify::verifier {

using probes::Clock;

void validate_namespace(const std::string& path) {
  auto fail = [&](std::string_view why) {
    return std::invalid_argument(fmt::format("--namespace '{}': {}", path, why));
  };
  if (path.empty() || path.front() != '/') throw fail("must be an absolute znode path, like /zkverify");
  if (path == "/") throw fail("must not be the root: zkverify writes only below its own namespace");
  if (path.back() == '/') throw fail("must not end with '/'");
  if (path.find("//") != std::string::npos) throw fail("has an empty path component");
  if (path == "/zookeeper" || path.starts_with("/zookeeper/")) throw fail("/zookeeper is reserved by the server");
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) throw fail("has a control character");
}

void validate(const QuorumOptions& options) {
  if (options.output != "text" && options.output != "json")
    throw std::invalid_argument(fmt::format("--output '{}': use text or json", options.output));
  validate_namespace(options.namespace_path);
  if (options.timeout <= std::chrono::milliseconds::zero()) throw std::invalid_argument("--timeout must be positive");
}

namespace {

std::string make_payload() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return fmt::format("zkverify {} host={} pid={} unix_ms={} nonce={:016x}", ZKVERIFY_VERSION, host, getpid(), now.count(),
                     std::random_device{}());
}

}  // namespace

EnsembleFacts gather(const QuorumOptions& options) {
  auto servers = probes::parse_server_list(options.servers);
  if (options.admin_ports) probes::assign_admin_ports(servers, *options.admin_ports);

  // The budget: probes get half (all servers at once, so a stalled one costs at most that), the round
  // trip what is left; a tenth is kept back for closing sessions and printing.
  auto start = Clock::now();
  auto end = start + options.timeout * 9 / 10;
  auto probe_end = options.no_write ? end : start + options.timeout / 2;
  auto probe_span = std::chrono::duration_cast<std::chrono::milliseconds>(probe_end - start);

  EnsembleFacts facts;
  probes::ProbeLimits limits;
  limits.deadline = probe_end;
  limits.connect_timeout = probe_span;
  limits.exchange_timeout = probe_span;
  facts.probes = probes::probe_servers(servers, limits);
  facts.write_skipped = options.no_write;
  if (options.no_write) return facts;

  probes::RoundTripPlan plan;
  std::optional<std::size_t> leader;
  for (const auto& probe : facts.probes) {
    if (!probe.srvr || probe.srvr->kind != probes::ReplyKind::facts) continue;
    auto mode = probe.srvr->facts.mode;
    if (mode != probes::Mode::leader && mode != probes::Mode::follower && mode != probes::Mode::observer) continue;
    if (mode == probes::Mode::leader) leader = plan.servers.size();
    plan.servers.push_back(probe.address);
  }
  if (plan.servers.empty()) return facts;
  plan.writer = leader.value_or(0);
  plan.namespace_path = options.namespace_path;
  plan.payload = make_payload();
  plan.deadline = end;
  facts.round_trip = probes::run_round_trip(plan);
  return facts;
}

int run_quorum(const QuorumOptions& options, std::ostream& out, std::ostream& err) {
  EnsembleFacts facts;
  try {
    validate(options);
    facts = gather(options);
  } catch (const std::invalid_argument& error) {
    err << "zkverify quorum: " << error.what() << "\n";
    return kExitUsage;
  }
  auto report = judge(facts);
  out << (options.output == "json" ? render_json(report) : render_text(report));
  out.flush();
  return exit_code(report.verdict);
}

}  // namespace zkverify::verifier
