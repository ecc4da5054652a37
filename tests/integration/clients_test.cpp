// --clients on a real ensemble with real clients: "Kafka brokers" on the Java client Kafka embeds
// (tests/lab/ZkBroker.java) hold /brokers/ids/N and /controller under their own sessions. One of
// them reaches only the server a roll restarts first, with a session shorter than that server's
// downtime: the roll must name that broker's lost session in that step and stop there, and must
// not blame the brokers whose sessions came through.

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "../unit/sidecar_http_client.hpp"
#include "integration/lab.hpp"
#include "integration/lab_brokers.hpp"
#include "integration/lab_sessions.hpp"
#include "model/facts/addresses.hpp"
#include "probes/watch_engine.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// `zkverify serve --clients kafka` in the background (120 s at most), on a port of its choosing, and
// stopped by SIGTERM when the test ends, also when it fails.
class Sidecar {
 public:
  Sidecar(const std::string& servers, const std::string& local, fs::path log) : log_(std::move(log)) {
    auto run = lab::sh("timeout -k 5 120 \"$ZKVERIFY\" serve --servers " + servers + " --local " + local +
                       " --listen 127.0.0.1:0 --interval 1s --timeout 3s --clients kafka >" + log_.string() +
                       " 2>&1 </dev/null & echo $!");
    pid_ = words_of(run.out).at(0);
  }
  ~Sidecar() {
    lab::sh("kill -TERM " + pid_ + "; for i in $(seq 100); do kill -0 " + pid_ + " 2>/dev/null || break; sleep 0.1; " +
            "done; kill -KILL " + pid_ + " 2>/dev/null; true");
  }
  Sidecar(const Sidecar&) = delete;
  Sidecar& operator=(const Sidecar&) = delete;

  std::string log() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Whether /metrics has `sample` (a whole line) within 30 s.
  bool shows(const std::string& sample) const {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      static const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
      std::smatch port;
      auto said = log();
      if (std::regex_search(said, port, listening)) {
        auto metrics = sidecar_client::get(static_cast<std::uint16_t>(std::stoi(port[1])), "/metrics").body;
        if (metrics.find("\n" + sample + "\n") != std::string::npos) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (std::chrono::steady_clock::now() < give_up);
    return false;
  }

 private:
  fs::path log_;
  std::string pid_;
};

const nlohmann::json& read_of(const nlohmann::json& report, const std::string& path) {
  for (const auto& read : report["clients"])
    if (read["path"] == path) return read;
  FAIL("no --clients read of " << path);
  static const nlohmann::json none;
  return none;
}

// The roll's one step (on `restarted`) cost broker 9 its session `first` (now `second`), and only it.
// Before COMMAND, cons said whose sessions the server held (broker 9's alone, with its timeout), or
// the roll said why it could not: maxClientCnxns=3 counts broker 9 and the watch's connections too.
void check_step_findings(const lab::Run& roll, const std::string& restarted, const std::string& first,
                         const std::string& second) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& finding : roll.json()["steps"][0]["findings"]) {  // the servers' side is checked elsewhere
    if (finding["code"] == "clients-moved") CHECK(finding["server"] == restarted);
    else if (finding["code"] != "ephemerals-fell") findings.push_back(finding);
  }
  bool cons_listed = findings.size() == 2;
  REQUIRE(findings.size() == (cons_listed ? 2U : 1U));  // brokers 1-3 and the controller came through
  CHECK(findings[0]["code"] == "client-session-lost");
  CHECK(findings[0]["server"] == restarted);
  CHECK_THAT(findings[0]["message"].get<std::string>(),
             Contains("Kafka broker 9") && Contains(first) && Contains(second) &&
                 Contains("was created on " + restarted) && Contains("which the step kept from serving for") &&
                 Contains("; followed live: "));  // the roll's watch saw it go (and come back)
  if (!cons_listed) {
    CHECK_THAT(roll.err, Contains(restarted + ": cons gave no list of its sessions"));
    WARN("cons was refused on " << restarted << " (maxClientCnxns): clients-on-server not seen this run");
    return;
  }
  CHECK(findings[1]["code"] == "clients-on-server");
  CHECK_THAT(
      findings[1]["message"].get<std::string>(),
      Contains("holds the sessions of Kafka broker 9 (/brokers/ids/9) with session " + first + " (timeout 4.0s)") &&
          !Contains("broker 1") && !Contains("broker 2") && !Contains("broker 3"));
  CHECK_THAT(roll.err, Contains("zkverify: " + restarted + ", about to restart, holds the sessions of Kafka broker 9"));
}

// The roll report's client lanes: broker 9's marked renewed on `restarted`'s step, the controller's
// held by one session throughout.
void check_client_lanes(const std::string& html_file, const std::string& restarted, const std::string& lost,
                        const std::string& controller_session) {
  std::ifstream file(html_file);
  std::stringstream text;
  text << file.rdbuf();
  auto html = text.str();
  auto lane = [&](const std::string& path) {
    auto begin = html.find("data-path=\"" + path + "\"");
    return begin == std::string::npos ? std::string() : html.substr(begin, html.find("</g>", begin) - begin);
  };
  CHECK_THAT(lane("/brokers/ids/9"), Contains(">broker 9<") && Contains("class=\"renewed\"") &&
                                         Contains("session " + lost + " ended during the step on " + restarted));
  CHECK_THAT(lane("/controller"), Contains("held by session " + controller_session) && !Contains("renewed"));
}

// --refuse-at-risk on the leader's step, with the ledger's last election outlasting broker 9's session:
// COMMAND (which would leave a file) is not run, exit 1, the sessions named; the approval ends, so the
// next step on the same ledger is approved. Where cons listed no session of broker 9 (maxClientCnxns)
// there is no risk to refuse on, which is said, not guessed.
void step_refused_at_risk(const lab::Lab& ensemble, const std::string& servers, const std::string& state,
                          const std::string& restarted) {
  auto ran = ensemble.dir() + "/../refused-command-ran";
  auto step = lab::zkverify("step --servers " + servers + " --clients kafka --state " + state +
                            " --refuse-at-risk --restart " + restarted + " --step-timeout 5s -- touch " + ran);
  INFO(step);
  bool listed = step.err.find("Kafka broker 9 (/brokers/ids/9) with session") != std::string::npos;
  if (!listed) {
    WARN("cons did not list broker 9's session before the leader's step: --refuse-at-risk had nothing to refuse");
    fs::remove(ran);
    return;
  }
  CHECK(step.exit_code == 1);
  CHECK_FALSE(fs::exists(ran));
  CHECK_THAT(step.out, Contains("election-outlasts-timeouts") &&
                           Contains("step " + restarted +
                                    ": not safe to restart: it leads, and client sessions have timeouts the last "
                                    "election outlasted (election-outlasts-timeouts) (--refuse-at-risk); COMMAND "
                                    "not run"));
  CHECK_THAT(step.err, !Contains("running: touch"));
  nlohmann::json after = nlohmann::json::parse(std::ifstream(state));
  CHECK(after["restarts_in_flight"].empty());
}

// A step whose COMMAND kills broker 9 (4 s session) and waits out its expiry before restarting
// `restarted`: broker 9 is gone at the step's last check, awaited until the step's deadline, and
// still gone then: client-gone, exit 1.
void step_reports_a_killed_broker_gone(const Brokers& brokers, const lab::Lab& ensemble, const std::string& servers,
                                       const std::string& restarted, const std::string& session) {
  // `restarted` leads (order's last): a ledger whose last election went 5 s without a leader names,
  // before COMMAND, the sessions whose timeout is no longer: broker 9's 4 s, not brokers 1-3's 10 s.
  auto state = ensemble.dir() + "/../election-state.json";
  REQUIRE(lab::zkverify("quorum --servers " + servers + " --state " + state).exit_code == 0);
  nlohmann::json ledger = nlohmann::json::parse(std::ifstream(state));
  ledger["last_election"] = {{"leaderless_ms", 5000}, {"during", "pzoo-9"}, {"at", "2026-12-07T18:00:00Z"}};
  std::ofstream(state) << ledger.dump();
  step_refused_at_risk(ensemble, servers, state, restarted);
  auto step = lab::zkverify("step --servers " + servers + " --clients kafka --state " + state + " --restart " +
                            restarted + " --step-timeout 10s --output json -- sh -c 'kill -KILL " + brokers.pid(9) +
                            " && sleep 6 && " + ZKLAB + " restart " + ensemble.dir() + " " + restarted + "'");
  INFO(step);
  CHECK(step.exit_code == 1);
  const auto& findings = step.json()["findings"];
  auto gone = std::ranges::find_if(findings, [](const auto& finding) { return finding["code"] == "client-gone"; });
  REQUIRE(gone != findings.end());
  CHECK_THAT((*gone)["message"].get<std::string>(),
             Contains("Kafka broker 9 (/brokers/ids/9): held by session " + session + " before, not there now") &&
                 Contains("; followed live: it went at "));  // the watch saw it go, during COMMAND
  fs::remove(state);
  auto risk = std::ranges::find_if(findings,
                                   [](const auto& finding) { return finding["code"] == "election-outlasts-timeouts"; });
  if (risk == findings.end()) {  // cons refused everywhere broker 9 is listed (maxClientCnxns): said, not guessed
    CHECK_THAT(step.err, !Contains("broker 9 (/brokers/ids/9) with session"));
    WARN("cons did not list broker 9's session before the leader's step: election-outlasts-timeouts not seen");
  } else {
    CHECK_THAT((*risk)["message"].get<std::string>(),
               Contains(restarted + ", about to restart, leads: the last election a step saw (during the step on "
                                    "pzoo-9, 2026-12-07T18:00:00Z) went 5.0s without a leader") &&
                   Contains("Kafka broker 9 (/brokers/ids/9) with session " + session + " (timeout 4.0s)") &&
                   !Contains("broker 1") && !Contains("broker 2") && !Contains("broker 3"));
    CHECK_THAT(step.err, Contains("zkverify: " + restarted + ", about to restart, leads:"));
  }
  // mntr before COMMAND counted broker 9's registration, and after the recovery did not.
  auto fell = std::ranges::find_if(findings, [](const auto& finding) { return finding["code"] == "ephemerals-fell"; });
  REQUIRE(fell != findings.end());
  CHECK_THAT((*fell)["message"].get<std::string>(),
             Contains("during the step on " + restarted) && Contains("the sessions that held 1 of them ended"));
  // Where its client connections went: at least the watch's session on it moved.
  auto moved = std::ranges::find_if(findings, [](const auto& finding) { return finding["code"] == "clients-moved"; });
  REQUIRE(moved != findings.end());
  CHECK_THAT((*moved)["message"].get<std::string>(), Contains(restarted + "'s ") && Contains("client connection"));
  CHECK_THAT(step.err, Contains(restarted + ": waiting up to ") &&
                           Contains("for Kafka broker 9 (/brokers/ids/9) to register again") &&
                           Contains(restarted + ": 0 of 1 registered again after "));
}

// The child watches on a real server: a watch engine's wait for broker 9's registration (a step's,
// after its last check) ends when broker 9, started again, registers under a new session (`killed`
// was its last), not at the wait's deadline.
void a_broker_back_ends_the_wait(Brokers& brokers, const std::string& servers, const std::string& connect,
                                 const std::string& killed) {
  ::zkverify::probes::WatchSettings settings;
  settings.servers = ::zkverify::parse_server_list(servers);
  settings.client_paths = {"/brokers/ids"};
  ::zkverify::probes::WatchEngine engine(settings, lab::executor(), lab::keepers(), nullptr);
  auto deadline = ::zkverify::Clock::now() + std::chrono::seconds(60);
  REQUIRE_FALSE(engine.start(deadline));
  auto waiting =
      std::async(std::launch::async, [&] { return engine.await_registrations({"/brokers/ids/9"}, deadline, nullptr); });
  brokers.start(9, connect, 4000);
  REQUIRE(waiting.wait_until(deadline) == std::future_status::ready);
  auto reads = waiting.get();
  engine.stop();
  REQUIRE(reads.size() == 1);
  auto back = std::ranges::find(reads[0].held, "/brokers/ids/9", &::zkverify::Registration::path);
  REQUIRE(back != reads[0].held.end());
  CHECK(::zkverify::session_text(back->owner) != killed);
}

// The sidecar follows the registrations from cycle to cycle: broker 3 killed is gone once its
// session expires, and no registration is counted renewed.
void sidecar_counts_a_killed_broker_gone(Brokers& brokers, const std::string& servers, const std::string& local,
                                         const std::string& lab_dir, const std::string& session) {
  Sidecar sidecar(servers, local, lab_dir + "/../serve-clients.log");
  auto shows = [&sidecar](const std::string& sample) {
    bool shown = sidecar.shows(sample);
    INFO(sample << " not in /metrics within 30 s; serve said:\n" << sidecar.log());
    CHECK(shown);
    return shown;
  };
  if (!shows(R"(zkverify_client_registrations{path="/brokers/ids"} 4)")) return;
  brokers.kill(3);
  shows(R"(zkverify_client_registrations_gone_total{path="/brokers/ids"} 1)");
  shows(R"(zkverify_client_registrations{path="/brokers/ids"} 3)");
  shows(R"(zkverify_client_registrations_renewed_total{path="/brokers/ids"} 0)");
  CHECK_THAT(sidecar.log(), Contains("client-gone: Kafka broker 3 (/brokers/ids/3): held by session " + session));
}

// Whether `file` holds `text` within 60 s (a broker's JVM starting on a busy machine, a session's expiry).
bool shows_within(const std::string& file, const std::string& text) {
  return lab::sh("for i in $(seq 600); do grep -qF '" + text + "' " + file + " && exit 0; sleep 0.1; done; exit 1")
             .exit_code == 0;
}

// watch --clients kafka follows the registrations live: broker 9, killed, is gone once its session
// expires; started again, it is back under a new session; broker 5, started during the watch, is
// new; at the end (SIGTERM) client-session-lost names broker 9 (and no finding broker 5), exit 2.
void watch_follows_a_broker_lost_and_back(Brokers& brokers, const std::string& servers, const std::string& connect,
                                          const std::string& spare, const std::string& lab_dir) {
  auto out = lab_dir + "/../watch-clients.out", err = lab_dir + "/../watch-clients.err", rc = lab_dir + "/../watch.rc";
  auto run = lab::sh("(timeout -k 5 120 \"$ZKVERIFY\" watch --servers " + servers + " --clients kafka --output json >" +
                     out + " 2>" + err + " </dev/null; echo $? >" + rc + ") & echo $!");
  auto shell = words_of(run.out).at(0);
  REQUIRE(shows_within(err, "zkverify watch: started"));
  auto old = brokers.sessions(9, 1).back();
  brokers.kill(9);
  CHECK(shows_within(out, R"("event":"client-gone")"));
  brokers.start(9, connect, 4000);
  CHECK(shows_within(out, R"("event":"client-back")"));
  auto renewed = brokers.sessions(9, 1).back();  // its file is the new JVM's once it registered
  brokers.start(5, spare, 10000);                // a broker the watch did not see at its start: new
  CHECK(shows_within(out, R"("event":"client-new")"));
  auto added = brokers.sessions(5, 1).at(0);
  // SIGTERM to timeout, which passes it on to the watch (what `&` starts ignores SIGINT).
  lab::sh("pkill -TERM -P " + shell + " timeout; for i in $(seq 300); do kill -0 " + shell +
          " 2>/dev/null || break; sleep 0.1; done");
  auto said = lab::sh("cat " + out + " " + err + " " + rc).out;
  INFO(said);
  CHECK_THAT(said, Contains("Kafka broker 9 (/brokers/ids/9): gone (it was held by session " + old + ")") &&
                       Contains("held by a new session " + renewed + "; session " + old + " ended") &&
                       Contains("Kafka broker 5 (/brokers/ids/5): held by session " + added) &&
                       Contains(R"("code":"client-session-lost")") &&
                       !Contains("broker 5 (/brokers/ids/5): held by session " + added + " before"));
  CHECK(lab::sh("cat " + rc).out == "2\n");
}

}  // namespace

TEST_CASE("clients (--clients kafka): a roll names the broker whose session its first step cost, and stops there",
          "[part:quorum][clients]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  auto order_run = lab::zkverify("order --servers " + servers);
  REQUIRE(order_run.exit_code == 0);
  auto order = words_of(order_run.out);
  REQUIRE(order.size() == 5);

  // One broker per server after the first (maxClientCnxns=3 counts zkverify's connections from this
  // host too), and broker 9 on the first alone, with a session shorter than its restart.
  Brokers brokers;
  for (int id = 1; id <= 3; ++id) brokers.start(id, address_of(servers, order[id]), 10000, id == 1);
  brokers.start(9, address_of(servers, order[0]), 4000);
  auto first_session = brokers.sessions(9, 1).at(0);
  auto controller_session = brokers.sessions(1, 1).at(0);
  brokers.sessions(2, 1);
  brokers.sessions(3, 1);

  auto state = ensemble.dir() + "/../clients-state.json";
  auto before = lab::zkverify("quorum --servers " + servers + " --clients kafka --state " + state + " --output json");
  INFO(before);
  REQUIRE(before.exit_code == 0);
  const auto& ids = read_of(before.json(), "/brokers/ids");
  REQUIRE(ids["held"].size() == 4);
  CHECK(ids["held"][3]["path"] == "/brokers/ids/9");
  CHECK(ids["held"][3]["owner"] == first_session);
  CHECK(read_of(before.json(), "/controller")["held"][0]["owner"] == controller_session);
  CHECK(read_of(before.json(), "/controller_epoch")["data"] == "1");

  auto html = ensemble.dir() + "/../clients-roll.html";
  auto roll = lab::zkverify("roll --servers " + servers + " --clients kafka --state " + state + " --report " + html +
                            " --output json -- sh -c '" + ZKLAB + " stop " + ensemble.dir() + " {} && sleep 5 && " +
                            ZKLAB + " start " + ensemble.dir() + " {}'");
  INFO(roll);
  CHECK(roll.exit_code == 1);
  check_client_lanes(html, order[0], first_session, controller_session);
  const auto& steps = roll.json()["steps"];
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]["server"] == order[0]);
  CHECK(roll.json()["done"] == nlohmann::json::array({order[0]}));
  auto second_session = brokers.sessions(9, 2).at(1);
  check_step_findings(roll, order[0], first_session, second_session);

  // The ledger took the new holder: the gate after the roll does not blame the same loss again.
  auto after = lab::zkverify("quorum --servers " + servers + " --clients kafka --state " + state + " --output json");
  INFO(after);
  CHECK(after.exit_code == 0);
  CHECK(read_of(after.json(), "/brokers/ids")["held"][3]["owner"] == second_session);
  fs::remove(state);

  step_reports_a_killed_broker_gone(brokers, ensemble, servers, order[4], second_session);
  a_broker_back_ends_the_wait(brokers, servers, address_of(servers, order[0]), second_session);
  sidecar_counts_a_killed_broker_gone(brokers, servers, order[4], ensemble.dir(), brokers.sessions(3, 1).at(0));
  watch_follows_a_broker_lost_and_back(brokers, servers, address_of(servers, order[0]), address_of(servers, order[4]),
                                       ensemble.dir());
}

TEST_CASE("clients: where cons is not whitelisted, the AdminServer lists the restarted server's sessions",
          "[part:shapes][clients]") {
  auto& ensemble = lab::shared("ruok");  // kubernetes-kafka's whitelist: cons refused
  auto servers = ensemble.servers();
  auto follower = ensemble.leader() == "pzoo-0" ? std::string("pzoo-1") : std::string("pzoo-0");
  Brokers brokers;
  // Pinned to the follower, with a session longer than its restart: kept through the step.
  brokers.start(7, address_of(servers, follower), 20000);
  auto session = brokers.sessions(7, 1).at(0);
  auto step = lab::zkverify("step --servers " + servers + " --admin-port " + ensemble.admin_ports() +
                            " --clients kafka --restart " + follower + " --output json -- " + ZKLAB + " restart " +
                            ensemble.dir() + " " + follower);
  INFO(step);
  CHECK(step.exit_code == 0);
  CHECK_THAT(step.err,
             !Contains("cons gave no list") && Contains("zkverify: " + follower +
                                                        ", about to restart, holds the sessions of Kafka broker 7 "
                                                        "(/brokers/ids/7) with session " +
                                                        session + " (timeout "));
  const auto* held = lab::find_finding(step.json(), "clients-on-server");
  REQUIRE(held);
  CHECK((*held)["severity"] == "info");
  CHECK_FALSE(lab::find_finding(step.json(), "client-session-lost"));
}
