// zkverify serve and probe against a real 5-server ensemble, scraped by a real Prometheus and read
// by headless Chromium. One lab for every step (CI time is precious): ready; another server down
// keeps the local server ready; the local server down is 503 within two intervals while /livez
// stays 200, and back to 200; no quorum makes every sidecar unready; the manifest's own args run
// against the lab; SIGTERM stops serve within a second. Every child has a deadline and is killed by pid.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../unit/sidecar_http_client.hpp"
#include "integration/lab.hpp"

extern char** environ;

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using std::chrono::milliseconds;
using std::chrono::seconds;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

fs::path scratch() {
  auto dir = fs::temp_directory_path() / ("zkverify-sidecar-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A child process under `timeout` (its deadline), output to a file; SIGTERM then SIGKILL by pid at the end.
class Child {
 public:
  Child(std::vector<std::string> args, const fs::path& log, int deadline_seconds = 600) : log_(log) {
    std::vector<std::string> full{"timeout", "-k", "5", std::to_string(deadline_seconds)};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : full) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int error = posix_spawnp(&pid_, "timeout", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::runtime_error("cannot start " + args.front());
  }
  ~Child() { stop(seconds(5)); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // SIGTERM, then waits up to `grace` (then SIGKILL). The exit status, or -1 when it had to be killed.
  int stop(milliseconds grace) {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    auto give_up = Clock::now() + grace;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > give_up) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return status_ = -1;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    pid_ = -1;
    return status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // The pid of the program `timeout` runs (empty once it ended).
  std::string program_pid() const { return pid_ > 0 ? lab::sh("pgrep -P " + std::to_string(pid_)).out : ""; }
  std::string log() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  fs::path log_;
};

// Polls `probe` every 100 ms until it is true or `limit` passed; how long it took, or nullopt.
template <class Probe>
std::optional<milliseconds> within(milliseconds limit, Probe probe) {
  auto started = Clock::now();
  for (;;) {
    if (probe()) return std::chrono::duration_cast<milliseconds>(Clock::now() - started);
    if (Clock::now() - started > limit) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(100));
  }
}

int status_of(std::uint16_t port, const std::string& target) {
  return sidecar_client::get(port, target, seconds(3)).status;
}

// zkverify_local_ready as Prometheus' query API returns it; "" while it has no sample.
std::string prometheus_value(std::uint16_t prometheus, const std::string& query) {
  auto reply = sidecar_client::get(prometheus, "/api/v1/query?query=" + query, seconds(3));
  if (reply.status != 200) return "";
  auto json = nlohmann::json::parse(reply.body, nullptr, false);
  if (json.is_discarded() || json["data"]["result"].empty()) return "";
  return json["data"]["result"][0]["value"][1].get<std::string>();
}

std::unique_ptr<Child> start_prometheus(const fs::path& dir, std::uint16_t target, std::uint16_t port) {
  fs::create_directories(dir / "data");
  std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                           "scrape_configs:\n  - job_name: zkverify\n    static_configs:\n"
                                           "      - targets: ['127.0.0.1:"
                                        << target << "']\n";
  return std::make_unique<Child>(
      std::vector<std::string>{"prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
                               "--storage.tsdb.path=" + (dir / "data").string(),
                               "--web.listen-address=127.0.0.1:" + std::to_string(port)},
      dir / "prometheus.log", 900);
}

// The zkverify container of `manifest` (deploy/kubernetes/), after checking what a readiness
// sidecar needs there: a StatefulSet's ZooKeeper container is Ready by zkverify's /readyz on 9181 and
// has no liveness probe (the seed prefers Ready:False to restarts); its headless Service publishes
// not-ready addresses (peers must resolve each other before they are ready, or bootstrap deadlocks);
// the container mounts zkverify-config.yaml's ConfigMap where its --config points.
struct ManifestContainer {
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // a fieldRef's value as "fieldRef:PATH"
  std::string config;                      // zkverify.toml, as the ConfigMap holds it
};

ManifestContainer manifest_container(const std::string& manifest) {
  auto run = lab::sh(
      "python3 -c 'import sys, json, yaml\n"
      "docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]\n"
      "pods = [d[\"spec\"][\"template\"][\"spec\"] for d in docs if d[\"kind\"] in (\"StatefulSet\", \"Job\")]\n"
      "for d in docs:\n"
      "  if d[\"kind\"] == \"StatefulSet\":\n"
      "    zk = [c for c in d[\"spec\"][\"template\"][\"spec\"][\"containers\"] if c[\"name\"] == \"zookeeper\"][0]\n"
      "    assert \"livenessProbe\" not in zk, \"a liveness probe on ZooKeeper\"\n"
      "    get = zk[\"readinessProbe\"][\"httpGet\"]\n"
      "    assert (get[\"path\"], get[\"port\"]) == (\"/readyz\", 9181), get\n"
      "    svc = [s for s in docs if s[\"kind\"] == \"Service\" and s[\"metadata\"][\"name\"] == "
      "d[\"spec\"][\"serviceName\"]][0]\n"
      "    assert svc[\"spec\"][\"clusterIP\"] == \"None\" and svc[\"spec\"][\"publishNotReadyAddresses\"] is True, "
      "svc\n"
      "c = [c for c in pods[0][\"containers\"] if c[\"name\"] == \"zkverify\"][0]\n"
      "mount = [m for m in c[\"volumeMounts\"] if m[\"name\"] == \"zkverify-config\"][0]\n"
      "volume = [v for v in pods[0][\"volumes\"] if v[\"name\"] == \"zkverify-config\"][0]\n"
      "assert volume[\"configMap\"][\"name\"] == \"zkverify-config\", volume\n"
      "args = c[\"args\"]\n"
      "assert args[args.index(\"--config\") + 1] == mount[\"mountPath\"] + \"/zkverify.toml\", args\n"
      "maps = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d[\"kind\"] == \"ConfigMap\"]\n"
      "env = {e[\"name\"]: e.get(\"value\") or \"fieldRef:\" + e[\"valueFrom\"][\"fieldRef\"][\"fieldPath\"] "
      "for e in c.get(\"env\", [])}\n"
      "print(json.dumps({\"args\": args, \"env\": env, \"config\": "
      "maps[0][\"data\"][\"zkverify.toml\"]}))' " ZKVERIFY_SOURCE_DIR "/deploy/kubernetes/" +
      manifest + " " ZKVERIFY_SOURCE_DIR "/deploy/kubernetes/zkverify-config.yaml");
  INFO(manifest << ": " << run.err);
  REQUIRE(run.exit_code == 0);
  auto json = nlohmann::json::parse(run.out);
  return {json["args"].get<std::vector<std::string>>(), json["env"].get<std::map<std::string, std::string>>(),
          json["config"].get<std::string>()};
}

// `container`'s command line for the lab, as kubelet would start it in `pod`: its configuration with
// the cluster's names replaced by the lab's (each NAME=host:port by the lab's NAME=127.0.0.1:port,
// the listen address by loopback) written to `dir`, where --config points; a fieldRef variable set
// to the pod's name, through env(1).
std::vector<std::string> for_the_lab(const ManifestContainer& container, const lab::Lab& ensemble, std::uint16_t port,
                                     const fs::path& dir, const std::string& pod = "pzoo-0") {
  std::map<std::string, std::string> lab_entries;
  std::istringstream entries(ensemble.servers());
  for (std::string entry; std::getline(entries, entry, ',');) lab_entries[entry.substr(0, entry.find('='))] = entry;
  std::string config;
  std::istringstream lines(container.config);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("servers = \"")) {
      std::string replaced;
      std::istringstream cluster(line.substr(11, line.rfind('"') - 11));
      for (std::string entry; std::getline(cluster, entry, ',');)
        replaced += (replaced.empty() ? "" : ",") + lab_entries.at(entry.substr(0, entry.find('=')));
      line = "servers = \"" + replaced + "\"";
    }
    if (line.starts_with("listen = ")) line = "listen = \"127.0.0.1:" + std::to_string(port) + "\"";
    config += line + "\n";
  }
  auto path = dir / (pod + "-zkverify.toml");
  std::ofstream(path) << config;
  std::vector<std::string> args{"env"};
  for (const auto& [name, value] : container.env)
    args.push_back(name + "=" + (value == "fieldRef:metadata.name" ? pod : value));
  args.push_back(lab::zkverify_bin());
  for (std::size_t i = 0; i < container.args.size(); ++i)
    args.push_back(i > 0 && container.args[i - 1] == "--config" ? path.string() : container.args[i]);
  return args;
}

std::unique_ptr<Child> start_serve(const lab::Lab& ensemble, const std::string& local, std::uint16_t port,
                                   const fs::path& log) {
  return std::make_unique<Child>(
      std::vector<std::string>{lab::zkverify_bin(), "serve", "--servers", ensemble.servers(), "--local", local,
                               "--listen", "127.0.0.1:" + std::to_string(port), "--interval", "1s", "--timeout", "2s"},
      log);
}

// A follower other than `local`: stopping it degrades the ensemble without an election.
std::string other_follower(const lab::Lab& ensemble, const std::string& local) {
  for (const char* name : {"zoo-1", "zoo-0", "pzoo-2", "pzoo-1"})
    if (name != local && name != ensemble.leader()) return name;
  return "";
}

// The sidecar's zkverify_cycles_total, read from its own /metrics (-1 when absent).
long cycles_of(std::uint16_t port) {
  auto metrics = sidecar_client::get(port, "/metrics").body;
  auto at = metrics.find("\nzkverify_cycles_total ");
  return at == std::string::npos ? -1 : std::stol(metrics.substr(at + 23));
}

std::size_t round_trips_in(const lab::Lab& ensemble) {
  auto children = lab::znode_children(ensemble.servers(), "/zkverify");
  return std::ranges::count_if(children, [](const std::string& child) { return child.starts_with("roundtrip-"); });
}

// After serve stopped: its round trip's ephemeral node goes with the closed session's transaction,
// in well under the session timeout (10s), which is the bound only when serve says it left a
// session to expire. The log is read at the check, so a failure shows what serve said.
void no_round_trip_node_left(const lab::Lab& ensemble, const Child& serve) {
  auto log = serve.log();
  bool left_to_expire = log.find("the server expires it") != std::string::npos;
  auto bound = left_to_expire ? seconds(13) : seconds(3);
  INFO("serve's log:\n" << log);
  CHECK(within(bound, [&] { return round_trips_in(ensemble) == 0; }));
}

// On the leader's pod the sidecar writes through its own long-lived session, which outlives each
// cycle: the cycle deletes its node, or one would stay per cycle. At most the cycle in progress has one.
void serve_on_the_leader_leaves_no_round_trip_nodes(const lab::Lab& ensemble, std::uint16_t port, const fs::path& log) {
  auto serve = start_serve(ensemble, ensemble.leader(), port, log);
  REQUIRE(within(seconds(30), [&] { return status_of(port, "/readyz") == 200; }));
  auto cycles = cycles_of(port);
  REQUIRE(within(seconds(30), [&] { return cycles_of(port) >= cycles + 3; }));  // three more cycles
  CHECK(round_trips_in(ensemble) <= 1);
  CHECK(serve->stop(seconds(5)) == 0);
  no_round_trip_node_left(ensemble, *serve);
}

// Each step of the one-lab scenario; `port` is serve's (local server pzoo-0), `prometheus` scrapes it.
struct Scenario {
  const lab::Lab& ensemble;
  std::uint16_t port;
  std::uint16_t prometheus;
  fs::path dir;
};

void ready_on_every_page(const Scenario& s) {
  REQUIRE(within(seconds(30), [&] { return status_of(s.port, "/readyz") == 200; }));
  auto verbose = sidecar_client::get(s.port, "/readyz?verbose");
  CHECK(verbose.body ==
        "[+]serving ok\n[+]epoch ok\n[+]synced ok\nsync proof: round-trip read after sync\nreadyz check passed\n");
  CHECK(status_of(s.port, "/livez") == 200);
  auto ensemble_body = sidecar_client::get(s.port, "/ensemble").body;
  lab::check_schema("serve-ensemble", ensemble_body);
  auto ensemble_json = nlohmann::json::parse(ensemble_body);
  CHECK(ensemble_json["verdict"] == "healthy");
  CHECK(ensemble_json["servers"].size() == 5);
  CHECK(ensemble_json.contains("checked_at"));
  // The last cycle, seconds ago at most: --interval 1s, and a cycle takes well under its --timeout.
  CHECK(ensemble_json["age_ms"].get<int>() >= 0);
  CHECK(ensemble_json["age_ms"].get<int>() < 6000);
  auto metrics = sidecar_client::get(s.port, "/metrics").body;
  CHECK_THAT(metrics, Contains("zkverify_local_ready 1\n"));
  auto round_trip = metrics.find("\nzkverify_round_trip_seconds ");  // measured: the cycle's sync and read
  REQUIRE(round_trip != std::string::npos);
  auto round_trip_seconds = std::stod(metrics.substr(round_trip + 29));
  CHECK(round_trip_seconds > 0);
  CHECK(round_trip_seconds < 5);
  CHECK(status_of(s.port, "/nope") == 404);
  CHECK(sidecar_client::request(s.port, "POST", "/readyz").status == 405);
  auto probe = lab::zkverify("probe --servers " + s.ensemble.servers() + " --local pzoo-0");
  CHECK(probe.exit_code == 0);
  CHECK_THAT(probe.out, Contains("ready: pzoo-0"));
  // Prometheus scrapes serve; its query API sees the local server ready.
  CHECK(within(seconds(60), [&] { return prometheus_value(s.prometheus, "zkverify_local_ready") == "1"; }));
  // Chromium renders the status page.
  auto dom = lab::chromium_dom("http://127.0.0.1:" + std::to_string(s.port) + "/");
  CHECK_THAT(dom, Contains("pzoo-0: ready"));
  CHECK_THAT(dom, Contains("healthy: leader " + s.ensemble.leader()));
  CHECK_THAT(dom, Contains("[+] synced ok"));
}

void another_server_down_keeps_ready(const Scenario& s) {
  auto other = other_follower(s.ensemble, "pzoo-0");
  s.ensemble.act("stop", other);
  CHECK(within(seconds(15), [&] {
    return nlohmann::json::parse(sidecar_client::get(s.port, "/ensemble").body)["verdict"] != "healthy";
  }));
  for (int i = 0; i < 3; ++i, std::this_thread::sleep_for(seconds(1))) CHECK(status_of(s.port, "/readyz") == 200);
  s.ensemble.act("start", other);
  s.ensemble.act("wait");
}

void local_down_is_unready_then_back(const Scenario& s) {
  s.ensemble.act("stop", "pzoo-0");
  auto unready_after = within(seconds(30), [&] { return status_of(s.port, "/readyz") == 503; });
  REQUIRE(unready_after);
  CHECK(*unready_after <= milliseconds(2 * 1000 + 2000));  // two intervals, plus a cycle's --timeout
  // The first unready cycle may have probed pzoo-0 just before it stopped (its sync read failed);
  // the next ones find it down, and say so as README shows.
  std::string verbose;
  CHECK(within(seconds(10), [&] {
    verbose = sidecar_client::get(s.port, "/readyz?verbose").body;
    return verbose.find("[-]serving failed") != std::string::npos;
  }));
  CHECK_THAT(verbose, Contains("[-]serving failed: pzoo-0 is unreachable: connection refused\n"
                               "[-]epoch failed: not serving, so on no epoch\n"
                               "[-]synced failed: not serving\n"));
  for (int i = 0; i < 3; ++i, std::this_thread::sleep_for(milliseconds(500))) CHECK(status_of(s.port, "/livez") == 200);
  CHECK(within(seconds(60), [&] { return prometheus_value(s.prometheus, "zkverify_local_ready") == "0"; }));
  CHECK(lab::zkverify("probe --servers " + s.ensemble.servers() + " --local pzoo-0").exit_code == 1);
  s.ensemble.act("start", "pzoo-0");
  s.ensemble.act("wait");
  CHECK(within(seconds(30), [&] { return status_of(s.port, "/readyz") == 200; }));
  CHECK(within(seconds(60), [&] { return prometheus_value(s.prometheus, "zkverify_local_ready") == "1"; }));
}

void no_quorum_makes_every_sidecar_unready(const Scenario& s) {
  std::vector<std::string> stopped;
  for (const char* name : {"pzoo-1", "pzoo-2", "zoo-0"}) {
    s.ensemble.act("stop", name);
    stopped.push_back(name);
  }
  CHECK(within(seconds(30), [&] { return status_of(s.port, "/readyz") == 503; }));
  CHECK(status_of(s.port, "/livez") == 200);
  for (const char* local : {"pzoo-0", "zoo-1"}) {
    auto run = lab::zkverify("probe --servers " + s.ensemble.servers() + " --local " + local + " --timeout 2s");
    INFO(run);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.out, Contains("not ready: " + std::string(local)));
    CHECK(std::ranges::count(run.out, '\n') == 1);  // one line, for the kubelet's event
  }
  for (const auto& name : stopped) s.ensemble.act("start", name);
  s.ensemble.act("wait");
  CHECK(within(seconds(30), [&] { return status_of(s.port, "/readyz") == 200; }));
}

// Exactly the manifests' containers against the lab, with the one configuration they mount: each
// StatefulSet's sidecar (as its first pod) becomes ready, the gate Job's quorum passes, and the CI
// example's smoke (docs/smoke.md) passes on the same file.
void manifests_run_on_the_lab(const Scenario& s) {
  for (const auto& [manifest, pod] : {std::pair{"pzoo.yaml", "pzoo-0"}, std::pair{"zoo.yaml", "zoo-0"}}) {
    auto manifest_port = free_port();
    auto container = manifest_container(manifest);
    REQUIRE(container.args.front() == "serve");
    Child sidecar(for_the_lab(container, s.ensemble, manifest_port, s.dir, pod),
                  s.dir / (std::string(pod) + "-manifest.log"));
    INFO(manifest << "'s sidecar's log:\n" << sidecar.log());
    CHECK(within(seconds(30), [&] { return status_of(manifest_port, "/readyz") == 200; }));
    // The file's ensemble label and its local server from the pod's name.
    auto metrics = sidecar_client::get(manifest_port, "/metrics").body;
    CHECK_THAT(metrics, Contains("zkverify_local_ready{ensemble=\"kafka\"} 1\n"));
    CHECK(sidecar.stop(seconds(5)) == 0);
    CHECK_THAT(sidecar.log(), Contains("local server " + std::string(pod)));
  }
  auto gate = for_the_lab(manifest_container("quorum-gate.yaml"), s.ensemble, 0, s.dir, "gate");
  REQUIRE(gate.at(gate.size() - 3) == "quorum");
  std::string command;
  for (const auto& arg : gate) command += " '" + arg + "'";
  auto run = lab::sh("timeout 120" + command);
  INFO("the gate Job's" << command << ": " << run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, StartsWith("healthy: leader"));
  auto config = gate.back();
  auto smoke = lab::sh("timeout 120 " + lab::zkverify_bin() + " smoke --config '" + config + "' --junit " +
                       (s.dir / "smoke.xml").string());
  INFO("smoke --config " << config << ": " << smoke.out << smoke.err);
  CHECK(smoke.exit_code == 0);
  CHECK(fs::exists(s.dir / "smoke.xml"));
}

}  // namespace

TEST_CASE("serve and probe on a real ensemble: ready, degraded, local down, no quorum, Prometheus, Chromium",
          "[integration][sidecar][part:sidecar]") {
  auto dir = scratch();
  auto& ensemble = lab::shared();
  Scenario scenario{ensemble, free_port(), free_port(), dir};
  auto serve = start_serve(ensemble, "pzoo-0", scenario.port, dir / "serve.log");
  auto prometheus = start_prometheus(dir / "prometheus", scenario.port, scenario.prometheus);
  INFO("serve's log:\n" << serve->log());

  // The connections serve holds to each server, sampled through the whole scenario: at most its
  // long-lived session and one four-letter word or round-trip session (maxClientCnxns is per IP).
  auto serve_pid = serve->program_pid();
  std::erase(serve_pid, '\n');
  REQUIRE_FALSE(serve_pid.empty());
  auto lab_ports = ensemble.servers();
  std::atomic<int> most = 0;
  std::jthread sampler([&](const std::stop_token& sampling) {  // a failed REQUIRE stops and joins it
    while (!sampling.stop_requested()) {
      for (const auto& [port, count] : lab::connections_of(serve_pid))
        if (lab::lists_port(lab_ports, port)) most = std::max(most.load(), count);
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  ready_on_every_page(scenario);
  another_server_down_keeps_ready(scenario);
  local_down_is_unready_then_back(scenario);
  prometheus->stop(seconds(10));
  no_quorum_makes_every_sidecar_unready(scenario);
  sampler.request_stop();
  sampler.join();
  CHECK(most >= 1);
  CHECK(most <= 2);
  WARN("serve: at most " << most << " connections to one server");

  // SIGTERM: serve stops within a second, exit 0, saying so, its sessions closed: the round trip's
  // node of a cycle it interrupted went with its writer's session.
  std::this_thread::sleep_for(milliseconds(1100));  // into the next cycle
  auto stop_started = Clock::now();
  CHECK(serve->stop(seconds(5)) == 0);
  CHECK(Clock::now() - stop_started < milliseconds(1500));  // 1 s, plus process teardown under `timeout`
  CHECK_THAT(serve->log(), Contains("stopped"));
  no_round_trip_node_left(ensemble, *serve);

  serve_on_the_leader_leaves_no_round_trip_nodes(ensemble, free_port(), dir / "serve-leader.log");
  manifests_run_on_the_lab(scenario);
  fs::remove_all(dir);
}
