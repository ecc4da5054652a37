#pragma once
// Whole commands run as main() runs them, against fakes: four-letter-word peers that answer srvr as
// a healthy 5-server ensemble (under a ruok-only whitelist), and the fake keeper for the sessions.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_keeper.hpp"
#include "fake_peer.hpp"
#include "model/facts/addresses.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"
#include "verifier/commands/command.hpp"

namespace command_line {

// Servers answering srvr (the first one leads), refusing every other word as a ruok-only whitelist
// does: by default the seed's five (pzoo-0..2, zoo-0..1, ids 1-5); or any names, some of them
// observers (`Mode: observer`), for the majorities of other sizes.
class FakeEnsemble {
 public:
  explicit FakeEnsemble(std::vector<std::string> names = {"pzoo-0", "pzoo-1", "pzoo-2", "zoo-0", "zoo-1"},
                        std::set<std::size_t> observers = {})
      : names_(std::move(names)), observers_(std::move(observers)) {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      auto srvr = normal_srvr(i);
      peers_.push_back(std::make_unique<::fake::Peer>(
          std::map<std::string, ::fake::Script>{{"srvr", {::fake::Behaviour::answer, srvr}}},
          ::fake::Script{::fake::Behaviour::answer, capture("mntr_whitelist_ruok_only.txt")}));
      zookeeper.set_server_id(names_[i], static_cast<int>(i) + 1);
      if (i) servers_ += ',';
      servers_ += names_[i] + "=127.0.0.1:" + std::to_string(peers_.back()->port());
    }
  }
  // Server `index`'s usual srvr answer: as the leader (index 0), an observer or a follower.
  std::string normal_srvr(std::size_t index) const {
    auto srvr = capture(index == 0 ? "srvr_leader.txt" : "srvr_follower.txt");
    if (observers_.contains(index)) srvr.replace(srvr.find("Mode: follower"), 14, "Mode: observer");
    return srvr;
  }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& servers() const { return servers_; }
  // Server `index` (0 = the first listed) answers srvr with `script` from now on.
  void srvr_answers(std::size_t index, ::fake::Script script) {
    peers_.at(index)->replace_script("srvr", std::move(script));
  }
  // Server `index`'s nth srvr from now gets `choose(n)`, called on its peer's thread (fake_peer.hpp).
  void srvr_chooses(std::size_t index, std::function<::fake::Script(int nth)> choose) {
    peers_.at(index)->choose_script("srvr", std::move(choose));
  }
  void srvr_sequence(std::size_t index, std::vector<::fake::Script> sequence) {
    peers_.at(index)->script_sequence("srvr", std::move(sequence));
  }
  // A restart as COMMAND's own requests drive it (no test thread races the command): server `index`
  // answers srvr as usual until `witness` exists (COMMAND touched it); from its next ask on, it goes
  // through `phases` in order, each for its number of asks, the last one for good.
  struct Phase {
    int asks;
    ::fake::Script script;
  };
  void srvr_after(std::size_t index, std::filesystem::path witness, std::vector<Phase> phases) {
    srvr_chooses(index, [normal = normal_srvr(index), witness = std::move(witness), phases = std::move(phases),
                         since = -1](int nth) mutable {
      if (since < 0 && std::filesystem::exists(witness)) since = nth;
      if (since < 0) return ::fake::Script{::fake::Behaviour::answer, normal};
      int into = nth - since;
      for (const auto& phase : phases) {
        if (into < phase.asks) return phase.script;
        into -= phase.asks;
      }
      return phases.back().script;
    });
  }
  // Waits (at most 10 s) until server `index` has been asked srvr `more` times more than now.
  bool wait_for_asks(std::size_t index, int more) {
    auto& peer = *peers_.at(index);
    return peer.wait_for_asked("srvr", peer.asked("srvr") + more,
                               std::chrono::steady_clock::now() + std::chrono::seconds(10));
  }
  // How many times server `index` has been asked srvr so far.
  int srvr_asks(std::size_t index) { return peers_.at(index)->asked("srvr"); }
  zkverify::fake::Ensemble zookeeper;

 private:
  std::vector<std::string> names_;
  std::set<std::size_t> observers_;
  std::vector<std::unique_ptr<::fake::Peer>> peers_;
  std::string servers_;
};

struct Ran {
  int exit_code = 0;
  std::string out, err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

// Runs the command on `executor`. The environment is `environment` alone, never the test process's
// (ZKVERIFY_* must not leak in).
inline Ran run_on(zkverify::probes::Executor& executor, zkverify::fake::Ensemble& zookeeper,
                  std::vector<std::string> args, std::map<std::string, std::string> environment = {}) {
  std::ostringstream out, err;
  std::vector<const char*> argv{"zkverify"};
  for (const auto& arg : args) argv.push_back(arg.c_str());
  zkverify::verifier::Context context{
      executor, zookeeper.factory(), out, err, [environment = std::move(environment)](const std::string& name) {
        auto found = environment.find(name);
        return found == environment.end() ? std::nullopt : std::optional<std::string>(found->second);
      }};
  int code = zkverify::verifier::run_command_line(static_cast<int>(argv.size()), argv.data(), context);
  return {code, out.str(), err.str()};
}

// On the tests' shared executor: the fake's sessions, and the watch engines their listeners keep,
// outlive the run, and nothing that holds a strand may outlive its executor. A test that requests a
// stop uses run_on with an executor of its own, declared before the fake ensemble (a stop stays).
inline Ran run(zkverify::fake::Ensemble& zookeeper, std::vector<std::string> args,
               std::map<std::string, std::string> environment = {}) {
  return run_on(test_executor(), zookeeper, std::move(args), std::move(environment));
}

inline bool has_finding(const nlohmann::json& report, const std::string& code, const std::string& server = "") {
  for (const auto& finding : report["findings"])
    if (finding["code"] == code && (server.empty() || finding["server"] == server)) return true;
  return false;
}

// A scratch ledger (--state) path, removed with its lock file when the test ends, failed or not.
struct ScratchLedger {
  std::filesystem::path path;
  explicit ScratchLedger(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("zkverify-" + name + "-" + std::to_string(::getpid()) + ".json")) {
    std::filesystem::remove(path);
  }
  ~ScratchLedger() {
    std::filesystem::remove(path);
    std::filesystem::remove(path.string() + ".lock");
  }
  ScratchLedger(const ScratchLedger&) = delete;
  ScratchLedger& operator=(const ScratchLedger&) = delete;
};

// zoo.cfg files for a fake ensemble, whose servers report no list of their own (conf is refused, as a
// 3.4 server has none): its five as server.1..5 (named so by --zoo-cfg, reached on their client
// ports), and the longer lists with ids 6 and 7, which no server runs. Removed when the test ends.
struct ListFiles {
  std::filesystem::path stem;
  std::string five, six, seven;
  ListFiles(const FakeEnsemble& ensemble, const std::string& name)
      : stem(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))),
        five(stem.string() + "-5.cfg"),
        six(stem.string() + "-6.cfg"),
        seven(stem.string() + "-7.cfg") {
    std::string lines = "tickTime=2000\n";
    int id = 0;
    for (const auto& server : zkverify::parse_server_list(ensemble.servers()))
      lines += "server." + std::to_string(++id) + "=127.0.0.1:2888:3888:participant;" + server.endpoint() + "\n";
    std::ofstream(five) << lines;
    std::ofstream(six) << lines << "server.6=127.0.0.6:2888:3888:participant;2181\n";
    std::ofstream(seven) << lines << "server.6=127.0.0.6:2888:3888:participant;2181\n"
                         << "server.7=127.0.0.7:2888:3888:participant;2181\n";
  }
  ~ListFiles() {
    for (const auto& file : {five, six, seven}) std::filesystem::remove(file);
  }
  ListFiles(const ListFiles&) = delete;
  ListFiles& operator=(const ListFiles&) = delete;
};

// A file that a COMMAND or a test thread touches to say that something happened; named, so that one
// test can hold several.
struct Witness {
  std::filesystem::path path;
  explicit Witness(const std::string& name = "ran")
      : path(std::filesystem::temp_directory_path() / ("zkverify-step-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove(path);
  }
  ~Witness() { std::filesystem::remove(path); }
};

}  // namespace command_line
