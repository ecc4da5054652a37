// zkverify roll on a real ensemble (issue 16): a full roll of five with its HTML report rendered in
// headless Chromium, Kafka's brokers (Java clients) keeping their sessions through it (issue 58); a roll whose COMMAND
// leaves a server down stops there, and the same command, given a COMMAND that works, resumes; --dry-run runs nothing.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"
#include "integration/lab_brokers.hpp"

using Catch::Matchers::Contains;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
}

long count_of(const std::string& text, const std::string& what) {
  long n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Starts a roll in the background, sends it `signals` SIGTERMs once its first COMMAND runs, and
// returns what it printed (JSON) and its exit code.
lab::Run roll_signalled(const std::string& servers, const std::string& state, const std::string& restart, int signals) {
  auto pid_file = temp_path("roll-pid");
  auto started = temp_path("roll-started");
  std::filesystem::remove(started);
  lab::Run run;
  std::thread roller([&] {
    run = lab::sh("$ZKVERIFY roll --output json --servers " + servers + " --state " + state + " -- sh -c 'touch " +
                  started + "; sleep 1; " + restart + "' & echo $! > " + pid_file + "; wait $!");
  });
  for (int tries = 0; tries < 300 && !std::filesystem::exists(started); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string pid;
  std::ifstream(pid_file) >> pid;
  for (int i = 0; i < signals; ++i) lab::sh("kill -TERM " + pid + "; sleep 0.2");
  roller.join();
  std::filesystem::remove(pid_file);
  std::filesystem::remove(started);
  return run;
}

// The first SIGTERM lets the step under way finish, then the roll stops; the second stops the step.
void check_signals(const std::string& servers, const std::string& state, const std::string& restart) {
  auto once = roll_signalled(servers, state, restart, 1);
  INFO(once);
  CHECK(once.exit_code == 1);
  CHECK(once.json()["stopped_by_signal"] == true);
  REQUIRE(once.json()["steps"].size() == 1);
  for (const auto& finding : once.json()["steps"][0]["findings"])  // the step finished: at most what clients did
    CHECK(finding["severity"] == "info");
  CHECK(once.json()["done"].size() == 1);

  auto twice = roll_signalled(servers, state, restart, 2);
  INFO(twice);
  CHECK(twice.exit_code == 1);  // the interrupted step is a warning: degraded, not a crash or a usage error
  REQUIRE(twice.json()["steps"].size() == 1);
  const auto& findings = twice.json()["steps"][0]["findings"];
  CHECK(std::ranges::any_of(findings, [](const nlohmann::json& f) { return f["code"] == "interrupted"; }));
  WARN("the second SIGTERM stopped the roll's step after " << twice.elapsed.count() << "ms in all");
  CHECK(twice.json()["skipped"].size() == 1);  // the first run's step stays done
}

// The x of every match of `pattern`'s first group inside the SVG group `lane` of the report (the whole
// page when `lane` is empty).
std::vector<double> xs_in(const std::string& page, const std::string& lane, const std::regex& pattern) {
  auto from = lane.empty() ? 0 : page.find("<g class=\"" + lane + "\">");
  REQUIRE(from != std::string::npos);  // a renamed lane must not leave nothing to check
  auto until = lane.empty() ? page.size() : page.find("</g>", from);
  std::vector<double> xs;
  auto text = page.substr(from, until - from);
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it)
    xs.push_back(std::stod((*it)[1].str()));
  return xs;
}

// One clock for the roll, the watch and the poller: nothing is drawn before the first step's line,
// since nothing was restarted before it. A write-unavailability block starts at the last write
// acknowledged before it, which may be one writer interval earlier (50 ms at 20 writes a second:
// under 3 px of the 940 px timeline for any roll longer than 16 s).
void no_event_before_the_first_step(const std::string& page) {
  std::regex rect_x(R"re(<rect class="[a-z-]+" x="([0-9.]+)")re");
  std::regex line_x(R"re(<line class="step" x1="([0-9.]+)")re");
  auto steps = xs_in(page, "", line_x);
  REQUIRE(steps.size() == 5);
  auto first = *std::ranges::min_element(steps);
  for (double x : xs_in(page, "lane-sessions", rect_x)) CHECK(x >= first);
  for (double x : xs_in(page, "lane-writes", rect_x)) CHECK(x >= first - 3);
}

// Kafka's brokers through a healthy roll (--clients kafka): none lost its session or its registration,
// and their lanes in the report show each held by one session throughout.
void check_brokers_kept(const nlohmann::json& report, const std::string& page, const Brokers& brokers) {
  for (const auto& step : report["steps"])
    for (const auto& finding : step["findings"]) {
      INFO(finding.dump());
      CHECK((finding["code"] != "client-session-lost" && finding["code"] != "client-gone" &&
             finding["code"] != "controller-moved"));
    }
  for (int id = 1; id <= 3; ++id) CHECK(brokers.sessions(id, 1).size() == 1);  // never registered again
  CHECK(count_of(page, "class=\"lane-client\"") == 4);                         // brokers 1-3 and the controller
  CHECK(count_of(page, "class=\"renewed\"") == 0);
}

// The whole roll, with its JSON and its HTML report, and Kafka's brokers through it: three on the
// Java client Kafka embeds, each on a server of its own (maxClientCnxns=3 counts this host's
// connections), with Kafka's 18 s sessions, broker 1 the controller.
void check_full_roll(const lab::Lab& ensemble, const std::string& roll, const std::string& restart,
                     const std::string& html) {
  auto servers = ensemble.servers();
  auto order = words_of(lab::zkverify("order --servers " + servers).out);
  REQUIRE(order.size() == 5);
  Brokers brokers;
  for (int id = 1; id <= 3; ++id) brokers.start(id, address_of(servers, order[id]), 18000, id == 1);
  for (int id = 1; id <= 3; ++id) brokers.sessions(id, 1);
  auto full = lab::zkverify(roll + "--clients kafka --output json --report " + html + " -- " + restart);
  INFO(full);
  REQUIRE(full.exit_code == 0);
  const auto& report = full.json();
  CHECK(report["complete"] == true);
  CHECK(report["steps"].size() == 5);
  CHECK(report["steps"].back()["server"] == report["steps"].back()["leader_before"]);  // the leader went last
  CHECK(report["leader_moves"] == 1);
  CHECK(report["watch"]["sessions_expired"] == 0);
  CHECK(report["watch"]["writes_lost"] == 0);
  WARN(report["summary"].get<std::string>());

  std::ifstream written(html);
  no_event_before_the_first_step({std::istreambuf_iterator<char>(written), std::istreambuf_iterator<char>()});
  auto page = lab::chromium_dom("file://" + html);
  CHECK(count_of(page, "class=\"lane\"") == 5);
  CHECK_THAT(page,
             Contains("id=\"writes-acked\">" + std::to_string(report["watch"]["writes_acked"].get<long>()) + "<"));
  CHECK_THAT(page, Contains("id=\"verdict\">healthy<"));
  check_brokers_kept(report, page, brokers);
  std::filesystem::remove(html);
}

// A COMMAND that stops the second server for good: the roll stops there, nothing after it
// restarted; the same roll resumes after the operator started it again.
void check_stop_and_resume(const lab::Lab& ensemble, const std::string& roll, const std::string& state,
                           const std::string& restart) {
  auto servers = ensemble.servers();
  auto order = lab::zkverify("order --servers " + servers);
  std::istringstream names(order.out);
  std::string first, second;
  names >> first >> second;
  auto breaking = std::string("sh -c 'if [ {} = ") + second + " ]; then " + ZKLAB + " stop " + ensemble.dir() +
                  " {}; else " + restart + "; fi'";
  auto stopped = lab::zkverify("roll --servers " + servers + " --state " + state +
                               " --step-timeout 15s --output json -- " + breaking);
  INFO(stopped);
  CHECK(stopped.exit_code == 1);
  CHECK(stopped.json()["complete"] == false);
  CHECK(stopped.json()["done"] == nlohmann::json::array({first}));
  CHECK(stopped.json()["steps"].size() == 2);

  ensemble.act("start", second);
  REQUIRE(lab::zkverify("quorum --wait 60s --servers " + servers).exit_code == 0);  // as an operator would
  auto resumed = lab::zkverify(roll + "--output json -- " + restart);
  INFO(resumed);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.json()["skipped"] == nlohmann::json::array({first}));
  CHECK(resumed.json()["steps"].size() == 4);
  CHECK(resumed.json()["complete"] == true);
}

}  // namespace

TEST_CASE("roll: five servers in one verified command, a stop at a failed step, a resume, a dry run",
          "[integration][roll][part:roll]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  auto state = temp_path("roll-ledger.json");
  auto restart = std::string(ZKLAB) + " restart " + ensemble.dir() + " {}";
  auto roll = "roll --servers " + servers + " --state " + state + " --step-timeout 60s ";

  auto marker = temp_path("roll-ran");
  auto dry = lab::zkverify(roll + "--dry-run -- touch " + marker);
  INFO(dry);
  CHECK(dry.exit_code == 0);
  CHECK_THAT(dry.out, Contains("nothing is run") && Contains("5. " + ensemble.leader()));
  CHECK_FALSE(std::filesystem::exists(marker));

  check_full_roll(ensemble, roll, restart, temp_path("roll-report") + ".html");
  check_stop_and_resume(ensemble, roll, state, restart);
  check_signals(servers, state, restart);
  CHECK(lab::zkverify("quorum --servers " + servers).exit_code == 0);
  CHECK_FALSE(lab::znode_exists(servers, "/zkverify/watch"));  // nothing of the rolls' watches is left
  std::filesystem::remove(state);
  std::filesystem::remove(state + ".lock");
}
