#include "integration/lab.hpp"
#include "integration/lab_sessions.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

// CATCH_CONFIG_EXTERNAL_INTERFACES (tests/CMakeLists.txt): the listener's base class.
#include <catch2/catch.hpp>

#include "model/facts/addresses.hpp"
#include "probes/c_keeper.hpp"

namespace lab {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path scratch_dir() {
  std::string pattern = (fs::temp_directory_path() / "zkverify-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

// Runs a shell command; returns its exit code and captures stdout and stderr.
int shell(const std::string& command, std::string& out, std::string& err) {
  auto dir = scratch_dir();
  // Braces: the redirections hold for every part of the command line, background jobs too.
  auto full = "{ " + command + "\n} >" + (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  int status = std::system(full.c_str());
  out = slurp(dir / "out");
  err = slurp(dir / "err");
  fs::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

const nlohmann::json& Run::json() const {
  if (!parsed_) {
    INFO("stdout: " << out << "\nstderr: " << err);
    auto parsed = nlohmann::json::parse(out, nullptr, false);
    REQUIRE_FALSE(parsed.is_discarded());
    parsed_ = std::move(parsed);
  }
  return *parsed_;
}

namespace {

// One line of JSON that never throws (a server's bytes need not be UTF-8).
std::string line_of(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `object[key]` as one line of JSON, "null" when it is not there (or `object` is no object).
std::string field(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) ? line_of(object[key]) : "null";
}

// A report's lines that a failed assertion is read for; other JSON (order's, a roll's) is dumped.
// This runs at every INFO, passing or not: it must never throw.
void summarize(std::ostream& out, const nlohmann::json& report) {
  auto array = [&](const char* key) { return report.contains(key) && report[key].is_array(); };
  if (!report.is_object() || !report.contains("verdict") || !array("servers") || !array("findings")) {
    out << line_of(report) << "\n";
    return;
  }
  out << "verdict " << field(report, "verdict") << ", serving_voters " << field(report, "serving_voters") << ", leader "
      << field(report, "leader") << "\n";
  for (const auto& finding : report["findings"])
    out << "  finding " << field(finding, "severity") << " " << field(finding, "code") << " "
        << field(finding, "server") << ": " << field(finding, "message") << "\n";
  for (const auto& server : report["servers"])
    out << "  server " << field(server, "name") << " mode " << field(server, "mode") << " id " << field(server, "id")
        << " zxid " << field(server, "zxid") << " error " << field(server, "error") << " note " << field(server, "note")
        << "\n";
  out << "  round_trip " << field(report, "round_trip") << "\n  timings_ms " << field(report, "timings_ms") << "\n";
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Run& run) {
  out << "exit " << run.exit_code << " after " << run.elapsed.count() << " ms\n";
  if (!run.err.empty()) out << "stderr: " << run.err << (run.err.back() == '\n' ? "" : "\n");
  auto parsed = nlohmann::json::parse(run.out, nullptr, false);
  if (parsed.is_discarded()) out << "stdout: " << run.out;
  else summarize(out, parsed);
  return out;
}

Lab::Lab(std::string whitelist, std::string up_options) : dir_((scratch_dir() / "lab").string()) {
  std::string args = "up " + dir_;
  if (!whitelist.empty()) args += " --whitelist " + whitelist;
  if (!up_options.empty()) args += " " + up_options;
  try {
    zklab(args);
  } catch (...) {
    // No destructor runs for a Lab that was never made: what it started and its scratch go here.
    std::string out, err;
    shell(std::string(ZKLAB) + " down " + dir_, out, err);
    if (!std::getenv("ZKLAB_KEEP")) fs::remove_all(fs::path(dir_).parent_path());
    throw;
  }
}

Lab::~Lab() {
  try {
    zklab("down " + dir_);
  } catch (const std::exception& error) {
    // stderr, not WARN: a shared lab goes down after the last test case, outside any.
    std::cerr << "zklab down failed: " << error.what() << "\n";
  }
  if (!std::getenv("ZKLAB_KEEP")) fs::remove_all(fs::path(dir_).parent_path());
}

std::string Lab::zklab(const std::string& args) const {
  std::string out, err;
  int code = shell(std::string(ZKLAB) + " " + args, out, err);
  if (code != 0) throw std::runtime_error("zklab " + args + " failed (" + std::to_string(code) + "): " + err);
  return trimmed(out);
}

std::string Lab::servers() const { return zklab("servers " + dir_); }
std::string Lab::secure_servers() const { return zklab("secure-servers " + dir_); }
std::string Lab::admin_ports() const { return zklab("admin-ports " + dir_); }
std::string Lab::tls_dir() const { return zklab("tls-dir " + dir_); }

std::string Lab::leader() const {
  std::string out, err;
  shell(std::string(ZKLAB) + " leader " + dir_, out, err);
  return trimmed(out);
}

std::string Lab::act(const std::string& verb, const std::string& name) const {
  return zklab(verb + " " + dir_ + " " + name);
}

bool Lab::reset() const {
  std::string out, err;
  int code = shell(std::string(ZKLAB) + " reset " + dir_, out, err);
  if (code != 0) std::cerr << "zklab reset " << dir_ << " failed (" << code << "): " << err;
  return code == 0;
}

namespace {

struct SharedLab {
  std::string shape;
  std::unique_ptr<Lab> lab;
};

SharedLab& shared_slot() {
  static SharedLab slot;
  return slot;
}

// For a failed case: the last WARN and ERROR lines each server of the shared lab logged, with their
// times, on stderr beside the case's output: what the servers said while a check failed (a stalled
// write, a refused connection) is then in the CI log, not in a lab that is gone.
void print_server_warnings(const Lab& lab) {
  auto logs = sh("cd '" + lab.dir() +
                 "' && for log in */server.log; do echo \"-- ${log%/server.log}\"; "
                 "grep -E ' (WARN|ERROR) ' \"$log\" | tail -n 12 | cut -c1-240; done");
  std::cerr << "== the shared lab's servers' last warnings (the case failed; now "
            << sh("date +%T.%3N").out.substr(0, 12) << ")\n"
            << logs.out;
}

// Takes the shared lab down when the run ends: test_main ends the process without static destructors.
// A failed case first shows what the lab's servers warned about.
struct SharedLabDown : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed > 0 && shared_slot().lab) print_server_warnings(*shared_slot().lab);
    TestEventListenerBase::testCaseEnded(stats);
  }
  void testRunEnded(const Catch::TestRunStats& stats) override {
    shared_slot().lab.reset();
    TestEventListenerBase::testRunEnded(stats);
  }
};
CATCH_REGISTER_LISTENER(SharedLabDown)

}  // namespace

Lab& shared(const std::string& whitelist, const std::string& up_options) {
  auto& slot = shared_slot();
  auto shape = whitelist + "|" + up_options;
  if (slot.lab && slot.shape == shape && slot.lab->reset()) return *slot.lab;
  slot.lab.reset();  // down before the next one starts: one ensemble at a time
  slot.lab = std::make_unique<Lab>(whitelist, up_options);
  slot.shape = shape;
  return *slot.lab;
}

std::map<std::string, int> connections_of(const std::string& pid) {
  auto listed = sh("ss -Htnp state established | grep 'pid=" + pid + ",' | awk '{print $4}'");
  std::map<std::string, int> per_port;
  std::istringstream in(listed.out);
  for (std::string peer; in >> peer;) ++per_port[peer.substr(peer.rfind(':') + 1)];
  return per_port;
}

bool lists_port(const std::string& servers, const std::string& port) {
  return servers.find(":" + port + ",") != std::string::npos || servers.ends_with(":" + port);
}

const std::string& zkverify_bin() {
  static const std::string bin = [] {
    const char* chosen = std::getenv("ZKVERIFY_TEST_BIN");  // NOLINT(concurrency-mt-unsafe): read once, never set
    return std::string(chosen && *chosen ? chosen : ZKVERIFY_BIN);
  }();
  return bin;
}

Run sh(const std::string& command) {
  Run run;
  auto started = std::chrono::steady_clock::now();
  run.exit_code = shell("ZKVERIFY=" + zkverify_bin() + "; " + command, run.out, run.err);
  run.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  return run;
}

std::string stacks_of(const std::string& pid) {
  auto run = sh("timeout -k 5 30 gdb -p " + pid + " -batch -nx -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'");
  return run.out.empty() ? "no stacks of " + pid + " (gdb exited " + std::to_string(run.exit_code) + ")" : run.out;
}

std::string chromium_dom(const std::string& url) {
  auto dir = scratch_dir();
  // The flags keep Chromium off the network it would reach for at every start (closed here).
  auto run = sh("HOME=" + dir.string() + " timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu " +
                "--disable-background-networking --disable-component-update --disable-sync --no-first-run " +
                "--user-data-dir=" + (dir / "profile").string() + " --dump-dom '" + url + "'");
  fs::remove_all(dir);
  INFO("chromium on " << url << " exited " << run.exit_code << ":\n" << run.err);
  CHECK(run.exit_code == 0);
  return run.exit_code == 0 ? run.out : "";
}

void check_schema(const std::string& schema, const std::string& text) {
  auto dir = scratch_dir();
  auto document = dir / "output.json";
  std::ofstream(document) << text;
  std::string source = ZKVERIFY_SOURCE_DIR, out, err;
  int code = shell("/usr/bin/python3 " + source + "/tests/tools/validate_json.py " + source + "/docs/schema/" + schema +
                       ".json " + document.string(),
                   out, err);
  fs::remove_all(dir);
  INFO("docs/schema/" << schema << ".json on:\n" << text << "\n" << out << err);
  CHECK(code == 0);
}

Run zkverify(const std::string& args) {
  auto run = sh("$ZKVERIFY " + args);
  auto command = args.substr(0, args.find(' '));
  auto ours = args.substr(0, args.find(" -- "));  // COMMAND's arguments are not zkverify's
  bool json_out = ours.find("--output json") != std::string::npos;
  if (json_out && !run.out.empty() && fs::exists(fs::path(ZKVERIFY_SOURCE_DIR) / "docs/schema" / (command + ".json")))
    check_schema(command, run.out);
  return run;
}

::zkverify::probes::Executor& executor() {
  static ::zkverify::probes::Executor the_executor;
  return the_executor;
}

::zkverify::probes::KeeperFactory& keepers() {
  static ::zkverify::probes::CKeeperFactory the_keepers(executor());
  return the_keepers;
}

const nlohmann::json* find_finding(const nlohmann::json& report, const std::string& code) {
  for (const auto& finding : report["findings"])
    if (finding["code"] == code) return &finding;
  return nullptr;
}

std::vector<nlohmann::json> event_lines(const std::string& text) {
  std::vector<nlohmann::json> events;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_object()) events.push_back(std::move(event));
  }
  return events;
}

bool znode_exists(const std::string& servers, const std::string& path) {
  namespace probes = zkverify::probes;
  auto keeper = keepers().open(zkverify::parse_server_list(servers), {});
  REQUIRE(keeper->wait_connected(zkverify::Clock::now() + std::chrono::seconds(10)) == zkverify::ZkError::ok);
  auto found = probes::exists_now(*keeper, path, zkverify::Clock::now() + std::chrono::seconds(5));
  keeper->close(zkverify::Clock::now() + std::chrono::seconds(5));
  REQUIRE((found.error == zkverify::ZkError::ok || found.error == zkverify::ZkError::no_node));
  return found.error == zkverify::ZkError::ok;
}

std::vector<std::string> znode_children(const std::string& servers, const std::string& path) {
  namespace probes = zkverify::probes;
  auto keeper = keepers().open(zkverify::parse_server_list(servers), {});
  REQUIRE(keeper->wait_connected(zkverify::Clock::now() + std::chrono::seconds(10)) == zkverify::ZkError::ok);
  // After a sync, the list holds every transaction committed before it (a closed session's
  // ephemerals included), whichever server this session reached.
  probes::Expect<zkverify::DoneResult> synced;
  keeper->sync(path, synced.callback());
  REQUIRE(synced.await(zkverify::Clock::now() + std::chrono::seconds(5)).error == zkverify::ZkError::ok);
  probes::Expect<zkverify::ChildrenResult> listed;
  keeper->children(path, listed.callback());
  auto found = listed.await(zkverify::Clock::now() + std::chrono::seconds(5));
  keeper->close(zkverify::Clock::now() + std::chrono::seconds(5));
  REQUIRE((found.error == zkverify::ZkError::ok || found.error == zkverify::ZkError::no_node));
  return found.children;
}

}  // namespace lab
