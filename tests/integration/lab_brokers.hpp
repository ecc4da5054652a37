#pragma once
// The lab's "Kafka brokers": tests/lab/ZkBroker.java on the Java client Kafka embeds (Debian's
// zookeeper.jar), each a JVM of its own holding /brokers/ids/N (and with --controller, /controller)
// under its own session, registering again when its session expires, as Kafka does.

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "integration/lab.hpp"

namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// HOST:PORT of the server `name` in a --servers list.
std::string address_of(const std::string& servers, const std::string& name) {
  auto list = "," + servers;  // ",zoo-0=" is not found inside ",pzoo-0="
  auto at = list.find("," + name + "=");
  REQUIRE(at != std::string::npos);
  auto start = at + name.size() + 2;
  return list.substr(start, list.find(',', start) - start);
}

// The lab's brokers: each a JVM of its own, started in the background, stopped (SIGTERM closes its
// session) and waited for when the test ends, also when it fails.
class Brokers {
 public:
  Brokers() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zkverify-brokers-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()));
    dir_ = pattern;
  }
  ~Brokers() {
    for (const auto& pid : pids_) lab::sh("kill -TERM " + pid + " 2>/dev/null");
    // A JVM's SIGTERM hook closes its session first (5 s at most): then KILL.
    lab::sh("for pid in " + pid_list() + "; do for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; " +
            "done; kill -KILL $pid 2>/dev/null; done; true");
    std::filesystem::remove_all(dir_);
  }
  Brokers(const Brokers&) = delete;
  Brokers& operator=(const Brokers&) = delete;

  void start(int id, const std::string& connect, int session_ms, bool controller = false) {
    auto java = std::filesystem::path(ZKLAB).parent_path() / "ZkBroker.java";
    auto run = lab::sh(std::string("setsid java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp \"$(") + ZKLAB +
                       " classpath 3.8.0)\" " + java.string() + " " + connect + " " + std::to_string(session_ms) + " " +
                       std::to_string(id) + (controller ? " --controller" : "") + " >" + out(id) + " 2>" + out(id) +
                       ".err </dev/null & echo $!");
    REQUIRE(run.exit_code == 0);
    pids_.push_back(words_of(run.out).at(0));
    ids_.push_back(id);
  }

  // Broker `id` dies at once (SIGKILL): its session is left to expire, its registration with it.
  void kill(int id) { lab::sh("kill -KILL " + pid(id) + " 2>/dev/null"); }
  // The pid of broker `id`'s latest start.
  std::string pid(int id) const {
    auto at = std::ranges::find(ids_.rbegin(), ids_.rend(), id).base() - ids_.begin() - 1;
    return pids_.at(static_cast<std::size_t>(at));
  }

  // The sessions broker `id` registered under, in order ("0x..."), once it has `count` of them
  // (60 s at most: a JVM compiling its source on a busy machine).
  std::vector<std::string> sessions(int id, std::size_t count) const {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::vector<std::string> found;
    do {
      found.clear();
      std::ifstream in(out(id));
      for (std::string word, broker, session; in >> word;)
        if (word == "registered" && in >> broker >> session) found.push_back(session);
      if (found.size() >= count) return found;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < give_up);
    std::ifstream err(out(id) + ".err");
    FAIL("broker " << id << " registered " << found.size() << " times, not " << count << ": " << err.rdbuf());
    return found;
  }

 private:
  std::string out(int id) const { return (dir_ / ("broker-" + std::to_string(id))).string(); }
  std::string pid_list() const {
    std::string list;
    for (const auto& pid : pids_) list += pid + " ";
    return list;
  }
  std::filesystem::path dir_;
  std::vector<std::string> pids_;
  std::vector<int> ids_;  // the broker each pid runs
};

}  // namespace
