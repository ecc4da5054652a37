// What faults must not leave behind or corrupt, against a real ensemble: the znodes of a watch that
// was killed, and a watch whose reader stalls.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"
#include "integration/lab_sessions.hpp"
#include "probes/c_keeper.hpp"
#include "probes/watch_engine.hpp"

using namespace std::chrono_literals;
namespace probes = zkverify::probes;

namespace {

// The children of `path`, sorted; nullopt when it does not exist.
std::optional<std::vector<std::string>> children(probes::Keeper& keeper, const std::string& path) {
  probes::Expect<zkverify::ChildrenResult> listed;
  keeper.children(path, listed.callback());
  auto result = listed.await(zkverify::Clock::now() + 5s);
  if (result.error == zkverify::ZkError::no_node) return std::nullopt;
  REQUIRE(result.error == zkverify::ZkError::ok);
  return result.children;
}

long count_prefixed(const std::vector<std::string>& names, const std::string& prefix) {
  return std::ranges::count_if(names, [&](const std::string& name) { return name.starts_with(prefix); });
}

// `zkverify watch` in the background until it is SIGKILLed, like a watch whose machine died. The
// destructor kills it too (a test that failed half-way) and reaps it.
class KilledWatch {
 public:
  explicit KilledWatch(const std::string& servers) {
    thread_ = std::thread([this, servers] {
      lab::sh("$ZKVERIFY watch --duration 60s --servers " + servers + " >/dev/null 2>&1 & echo $! > " + pid_file_ +
              "; wait $!");
    });
  }
  ~KilledWatch() {
    kill();
    thread_.join();
    std::filesystem::remove(pid_file_);
  }
  KilledWatch(const KilledWatch&) = delete;
  KilledWatch& operator=(const KilledWatch&) = delete;

  void kill() {
    for (int tries = 0; pid_ == 0 && tries < 100; ++tries) {
      std::ifstream(pid_file_) >> pid_;
      if (pid_ == 0) std::this_thread::sleep_for(100ms);
    }
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }

 private:
  std::string pid_file_ =
      (std::filesystem::temp_directory_path() / ("killed-watch-" + std::to_string(::getpid()))).string();
  pid_t pid_ = 0;
  std::thread thread_;
};

// The watch engine in this process, for a moment, with its own sweep age (the binary's is a minute):
// the events it delivered.
std::vector<zkverify::WatchEvent> watch_briefly(const std::string& servers, std::chrono::milliseconds sweep_age) {
  probes::WatchSettings settings;
  settings.servers = zkverify::parse_server_list(servers);
  settings.sweep_age = sweep_age;
  std::mutex mutex;
  std::vector<zkverify::WatchEvent> events;
  probes::WatchEngine engine(settings, lab::executor(), lab::keepers(), [&](const zkverify::WatchEvent& event) {
    std::lock_guard lock(mutex);
    events.push_back(event);
  });
  auto error = engine.start(zkverify::Clock::now() + 10s);
  INFO(error.value_or(""));
  REQUIRE_FALSE(error);
  std::this_thread::sleep_for(500ms);
  engine.stop();  // every event delivered
  return events;
}

long swept(const std::vector<zkverify::WatchEvent>& events) {
  return std::ranges::count_if(events,
                               [](const zkverify::WatchEvent& e) { return e.kind == zkverify::WatchEventKind::swept; });
}

}  // namespace

TEST_CASE("a killed watch's znodes stay while its sessions live, and the watches after it clean up",
          "[integration][part:watch]") {
  auto& ensemble = lab::shared();
  auto servers = ensemble.servers();
  auto observer = lab::keepers().open(zkverify::parse_server_list(servers), {});
  REQUIRE(observer->wait_connected(zkverify::Clock::now() + 10s) == zkverify::ZkError::ok);
  const std::string runs = "/zkverify/watch";

  // Killed once its five sessions have their nodes and counters.
  std::string killed_run;
  {
    KilledWatch killed(servers);
    for (int tries = 0; tries < 100 && killed_run.empty(); ++tries) {
      std::this_thread::sleep_for(200ms);
      auto listed = children(*observer, runs);
      if (!listed || listed->size() != 1) continue;
      auto under = children(*observer, runs + "/" + listed->front());
      if (under && count_prefixed(*under, "session-") == 5 && count_prefixed(*under, "counter-") == 5)
        killed_run = runs + "/" + listed->front();
    }
    REQUIRE_FALSE(killed_run.empty());
  }
  auto left = children(*observer, killed_run);
  REQUIRE(left);
  REQUIRE(count_prefixed(*left, "session-") == 5);  // its sessions outlive it until they time out

  // Live sessions protect it whatever its age: here no age protects it.
  CHECK(swept(watch_briefly(servers, 0ms)) == 0);
  CHECK(children(*observer, killed_run) == left);

  // The binary leaves it too, and removes its own.
  auto second = lab::zkverify("watch --duration 2s --output json --servers " + servers);
  INFO(second);
  CHECK(second.exit_code == 0);
  CHECK_FALSE(second.out.find("\"swept\"") != std::string::npos);
  CHECK(children(*observer, runs) == std::vector<std::string>{killed_run.substr(runs.size() + 1)});
  CHECK(children(*observer, killed_run) == left);

  // Once the servers expired its sessions, a watch sweeps it (with the binary's age, a minute later).
  for (int tries = 0; tries < 150 && count_prefixed(children(*observer, killed_run).value(), "session-") > 0; ++tries)
    std::this_thread::sleep_for(200ms);
  REQUIRE(count_prefixed(children(*observer, killed_run).value(), "session-") == 0);
  auto events = watch_briefly(servers, 0ms);
  CHECK(swept(events) == 1);
  CHECK_FALSE(children(*observer, killed_run));
  CHECK_FALSE(children(*observer, runs));  // the last watch out removes the parent too
  observer->close(zkverify::Clock::now() + 5s);
}

// The test. It passes with an engine that ran the sink on the sessions' threads too: in a
// healthy run every line is printed at the start or at the end, never while writes are waiting for
// their acknowledgements. The next test is the one such an engine fails.
TEST_CASE("a reader that stalls for 5s holds up no write: events reach stdout off the sessions' threads",
          "[integration][part:watch]") {
  auto& ensemble = lab::shared();
  // The pipe's 64 KiB (Linux's default capacity) are filled first, so that the watch's very first
  // line waits until the reader wakes: lines this few would otherwise fit in the pipe, and no
  // write to stdout would ever wait.
  auto run = lab::sh(
      "{ head -c 65535 /dev/zero | tr '\\0' ' '; echo; $ZKVERIFY watch --duration 8s --output json"
      " --servers " +
      ensemble.servers() + "; echo \"watch exit $?\" >&2; } | (sleep 5; cat)");
  INFO(run);
  CHECK(run.err.find("watch exit 0") != std::string::npos);
  auto lines = lab::event_lines(run.out);
  REQUIRE(lines.size() > 1);
  CHECK(lines.front()["event"] == "connected");  // the line that waited for the reader
  const auto& summary = lines.back();
  REQUIRE(summary["event"] == "summary");
  // A writer held up by the reader would show its 5s here. 1s leaves room for the pauses of five JVMs
  // on a small machine (what counts as unavailable, at this rate, starts at 250ms).
  CHECK(summary["longest_unavailable_ms"].get<long>() < 1000);
  CHECK(summary["writes_lost"] == 0);
  CHECK(summary["writes_acked"].get<long>() > 100);  // 20 a second for 8s: the writer never waited
}

TEST_CASE("a follower lost while the reader stalls holds up no write", "[integration][part:watch]") {
  auto& ensemble = lab::shared();
  auto follower = ensemble.leader() == "pzoo-0" ? "pzoo-1" : "pzoo-0";
  // The reader reads for 3s, then not for 6s. 4s in, the pipe is filled (in the background: it
  // may wait) and a follower stopped, so that its session's `disconnected` line comes while stdout
  // is blocked. An engine that printed it on the session's thread, under the lock every write's
  // acknowledgement takes, stopped acknowledging writes until the reader woke (4.2s on this lab).
  auto run =
      lab::sh("{ $ZKVERIFY watch --duration 12s --output json --servers " + ensemble.servers() +
              " & W=$!; sleep 4; (head -c 65536 /dev/zero | tr '\\0' ' ') & sleep 0.5; " + ZKLAB + " stop " +
              ensemble.dir() + " " + follower + " >/dev/null 2>&1; wait $W; echo \"watch exit $?\" >&2; wait; }" +
              " | (timeout 3 cat; sleep 6; cat)");
  INFO(run);
  CHECK(run.err.find("watch exit 0") != std::string::npos);
  auto lines = lab::event_lines(run.out);
  REQUIRE_FALSE(lines.empty());
  CHECK(std::ranges::any_of(lines, [](const nlohmann::json& line) { return line["event"] == "disconnected"; }));
  const auto& summary = lines.back();
  REQUIRE(summary["event"] == "summary");
  CHECK(summary["longest_unavailable_ms"].get<long>() < 1000);
  CHECK(summary["writes_lost"] == 0);
}
