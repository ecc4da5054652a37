#pragma once
// The integration tests' handle on tests/lab/zklab: a real ensemble in a temporary directory,
// stopped (by pid) and removed when the Lab goes out of scope, also when a test fails.

#include <chrono>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lab {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  // out parsed as JSON (fails the test if it is not). A reference into the Run, so that
  // `for (auto& s : run.json()["servers"])` does not iterate over a destroyed temporary.
  const nlohmann::json& json() const;

 private:
  mutable std::optional<nlohmann::json> parsed_;
};

// For INFO: the exit code, stderr, and stdout; a JSON report is shortened to what a failure is read
// for (verdict, findings, one line per server, the round trip and timings), so that a failed case's
// message stays readable, and short enough for the tail of a CI log.
std::ostream& operator<<(std::ostream& out, const Run& run);

class Lab {
 public:
  // Starts the default five servers (pzoo-0..2, zoo-0..1) and waits until all serve. `up_options`
  // go to `zklab up` as they are (e.g. "--host ::1 --observers 2 --no-client-address").
  explicit Lab(std::string whitelist = "", std::string up_options = "");
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  std::string servers() const;         // NAME=127.0.0.1:PORT,... ([::1]:PORT on IPv6)
  std::string secure_servers() const;  // a --tls lab's, at their TLS ports (secureClientPort)
  std::string admin_ports() const;     // P1,P2,...
  std::string tls_dir() const;         // a --tls lab's ca.pem, client.pem and client.key are here
  std::string leader() const;          // "" when none says it leads
  const std::string& dir() const { return dir_; }
  // zklab VERB DIR NAME, must succeed; what it printed.
  std::string act(const std::string& verb, const std::string& name = "") const;
  // `zklab reset`: stopped servers started, paused ones resumed, every znode but /zookeeper deleted
  // and the empty tree read back everywhere. False (saying why on stderr) when it could not, or when
  // a server's configuration or version is no longer what `up` made.
  bool reset() const;

 private:
  std::string zklab(const std::string& args) const;
  std::string dir_;
};

// The lab of this shape (Lab's arguments) shared by the test cases of one test process: started at
// the first call, reset (Lab::reset) at each later one, so that each case starts from a healthy,
// empty ensemble without the cost of five JVMs starting. A lab that cannot be reset is taken down
// and a new one started; so is the lab of another shape (one ensemble at a time). The last one is
// taken down when the test run ends (a Catch2 listener), or by test.sh's trap if the process dies.
Lab& shared(const std::string& whitelist = "", const std::string& up_options = "");

// The first finding with `code` in a zkverify JSON report (or watch summary), or nullptr.
const nlohmann::json* find_finding(const nlohmann::json& report, const std::string& code);
// The events of `watch --output json` (or roll's, step's) in `text`, in order: the lines that are
// JSON objects; any other line (padding, a shell's words) is skipped. The summary is the last.
std::vector<nlohmann::json> event_lines(const std::string& text);

// The zkverify binary the tests run: this build's, or ZKVERIFY_TEST_BIN's (scripts/test.sh runs
// some parts again with the ThreadSanitizer build's).
const std::string& zkverify_bin();
// Runs the zkverify binary with `args`; stdout, stderr and the exit code come back. With
// `--output json`, a non-empty stdout is checked against docs/schema/COMMAND.json (the test fails
// when it does not match).
Run zkverify(const std::string& args);
// Checks `text` against docs/schema/`schema`.json with Debian's python3-jsonschema (a CHECK).
void check_schema(const std::string& schema, const std::string& text);
// Runs a shell command line, where "$ZKVERIFY" is the zkverify binary.
Run sh(const std::string& command);
// Every thread's stack in process `pid` (gdb in batch mode, at most 30 s), for the failure message
// of a test that caught a zkverify hanging; what went wrong instead when gdb cannot tell.
std::string stacks_of(const std::string& pid);
// The DOM headless Chromium renders for `url` (after layout), "" on failure. Its HOME and profile
// are a scratch directory removed afterwards: nothing is left in the user's home.
std::string chromium_dom(const std::string& url);
// Established TCP connections of process `pid` (its outgoing ones and any it accepted), counted by
// the peer's port.
std::map<std::string, int> connections_of(const std::string& pid);
// Whether `port` is one of the ports in `servers` (a --servers list).
bool lists_port(const std::string& servers, const std::string& port);
// Whether the znode `path` exists, asked through a session of the test's own (fails the test when
// the ensemble cannot answer).
bool znode_exists(const std::string& servers, const std::string& path);
// The children of `path` (none when it does not exist), asked the same way.
std::vector<std::string> znode_children(const std::string& servers, const std::string& path);

}  // namespace lab
