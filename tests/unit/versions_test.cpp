// Every ZooKeeper line the seed's users run, 3.4 to 3.9 (issue 17): the parsers over each line's
// fixtures (tests/data/<line>/, built from that release's source; 3.8 is the real captures in
// tests/data/), four-letter probes against fake peers that answer as a 3.4 server does, the
// verdicts on each line's fake ensemble (3.4, 3.5, 3.6, 3.7, 3.9) against 3.8's, the AdminServer's
// zabstate and the sidecar's fallback without it, mixed 3.4/3.5 ensembles, and the C client's
// create falling back to create + exists against a server that speaks the 3.4 wire protocol.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include "loopback_port.hpp"

#include "fake_peer.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/readiness.hpp"
#include "model/parse/parsers.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "probes/round_trip.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// The fixtures of a line: "3.8" is the real captures at the top of tests/data/.
std::string fixture(const std::string& line, const std::string& name) {
  return capture(line == "3.8" ? name : line + "/" + name);
}

// What zkverify should get out of each line's replies.
struct LineExpectation {
  std::string line;
  std::string release;         // srvr's version, up to the first '-'
  bool conf_has_members;       // 3.5+: "membership:" and the server.N lines
  bool mntr_has_quorum_size;   // 3.6+: the quorum_size gauge
  bool has_admin_server;       // 3.5+
  bool admin_has_voting_view;  // 3.6+
};

const std::vector<LineExpectation> kLines{
    {"3.4", "3.4.14", false, false, false, false}, {"3.5", "3.5.10", true, false, true, false},
    {"3.6", "3.6.4", true, true, true, true},      {"3.7", "3.7.2", true, true, true, true},
    {"3.8", "3.8.0", true, true, true, true},      {"3.9", "3.9.5", true, true, true, true},
};

}  // namespace

TEST_CASE("srvr, mntr, conf and isro of every line from 3.4 to 3.9 parse", "[versions]") {
  for (const auto& line : kLines) {
    INFO("line " << line.line);
    auto srvr = parse_srvr(fixture(line.line, "srvr_leader.txt"));
    REQUIRE(srvr.error == ProbeError::ok);
    CHECK(srvr.facts.mode == Mode::leader);
    CHECK(srvr.facts.zxid.epoch() == 1);
    CHECK(srvr.facts.version.starts_with(line.release + "-"));
    CHECK(parse_srvr(fixture(line.line, "srvr_follower.txt")).facts.mode == Mode::follower);

    auto mntr = parse_mntr(fixture(line.line, "mntr_leader.txt"));
    REQUIRE(mntr.error == ProbeError::ok);
    CHECK(mntr.facts.server_state == "leader");
    CHECK(mntr.facts.synced_followers == 4);
    CHECK(mntr.facts.quorum_size.has_value() == line.mntr_has_quorum_size);
    CHECK(parse_mntr(fixture(line.line, "mntr_follower.txt")).facts.server_state == "follower");

    auto conf = parse_conf(fixture(line.line, "conf_leader.txt"));
    REQUIRE(conf.error == ProbeError::ok);
    CHECK(conf.facts.server_id == 5);
    CHECK(conf.facts.members.size() == (line.conf_has_members ? 5u : 0u));
    CHECK(conf.facts.config_version.has_value() == line.conf_has_members);

    auto isro = parse_isro(fixture(line.line, "isro_leader.txt"));
    REQUIRE(isro.error == ProbeError::ok);
    CHECK_FALSE(isro.facts.read_only);
  }
}

TEST_CASE("3.4's srvr, mntr and conf: what is absent", "[versions]") {
  auto srvr = parse_srvr(fixture("3.4", "srvr_leader.txt"));
  REQUIRE(srvr.ok());
  CHECK(srvr.facts.received == 4);  // "Latency min/avg/max: 0/0/0": a long average, unlike 3.6+'s 0.0

  auto mntr = parse_mntr(fixture("3.4", "mntr_leader.txt"));
  REQUIRE(mntr.ok());
  CHECK(mntr.facts.znode_count == 3);
  CHECK_FALSE(mntr.facts.learners);     // 3.4 and 3.5 print zk_followers, not the zk_learners gauge
  CHECK_FALSE(mntr.facts.quorum_size);  // so the voters come from conf (3.5) or the listed servers (3.4)

  auto conf = parse_conf(fixture("3.4", "conf_follower.txt"));
  REQUIRE(conf.ok());
  CHECK(conf.facts.server_id == 1);
  CHECK(conf.facts.members.empty());
  CHECK_FALSE(conf.facts.voters_only);
}

TEST_CASE("3.5's conf names the membership with client addresses and the config version", "[versions]") {
  auto conf = parse_conf(fixture("3.5", "conf_follower.txt"));
  REQUIRE(conf.ok());
  REQUIRE(conf.facts.members.size() == 5);
  CHECK(conf.facts.members[0].quorum_address == "127.0.0.1:2888");
  CHECK(conf.facts.members[0].election_address == "127.0.0.1:3888");
  CHECK(conf.facts.members[0].client_address == "127.0.0.1:2181");
  CHECK(conf.facts.members[0].role == "participant");
  CHECK(conf.facts.config_version == 0);
}

TEST_CASE("refusals read the same on every line", "[versions]") {
  for (const auto& line : kLines) {
    if (line.line == "3.8") continue;  // the 3.8 captures are covered by parsers_test
    INFO("line " << line.line);
    CHECK(parse_srvr(fixture(line.line, "srvr_not_serving.txt")).error == ProbeError::not_serving);
    CHECK(parse_isro(fixture(line.line, "isro_not_serving.txt")).error == ProbeError::not_serving);
    if (line.line != "3.4")  // 3.4.14 answers every word but wchc and wchp unless a whitelist is set
      CHECK(parse_mntr(fixture(line.line, "mntr_not_whitelisted.txt")).error == ProbeError::not_whitelisted);
  }
}

TEST_CASE("the AdminServer's JSON of 3.5 to 3.9", "[versions]") {
  for (const auto& line : kLines) {
    if (!line.has_admin_server || line.line == "3.8") continue;
    INFO("line " << line.line);
    auto monitor = parse_admin_monitor(fixture(line.line, "admin_monitor_leader.json"));
    REQUIRE(monitor.ok());
    CHECK(monitor.facts.server_state == "leader");
    CHECK(monitor.facts.synced_followers == 4);
    CHECK(monitor.facts.quorum_size.has_value() == line.mntr_has_quorum_size);
    CHECK(parse_admin_monitor(fixture(line.line, "admin_monitor_follower.json")).facts.server_state == "follower");

    auto conf = parse_admin_conf(fixture(line.line, "admin_conf_leader.json"));
    REQUIRE(conf.ok());
    CHECK(conf.facts.server_id == 5);

    auto view = parse_admin_voting_view(fixture(line.line, "admin_voting_view_leader.json"));
    CHECK(view.ok() == line.admin_has_voting_view);
    if (view.ok()) CHECK(view.facts.members.size() == 5);
  }
}

TEST_CASE("3.5's AdminServer has no voting_view: the reply says so, and names the command", "[versions]") {
  auto view = parse_admin_voting_view(fixture("3.5", "admin_voting_view_leader.json"));
  CHECK(view.error == ProbeError::malformed);
  CHECK_THAT(view.detail, Contains("Unknown command: voting_view"));
}

namespace {

using ClosedPort = loopback::RefusingPort;

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

::fake::Script answer(std::string reply) { return {::fake::Behaviour::answer, std::move(reply)}; }

enum class Role { leader, follower, not_serving };

// One server of a 5-server ensemble (ids 1-5, 5 leads) as a line's fixtures say it answers the
// words zkverify sends; `synced` is the leader's zk_synced_followers.
std::map<std::string, ::fake::Script> answers_of(const std::string& line, Role role, int id, int synced) {
  if (role == Role::not_serving) {  // srvr, mntr and conf print the same line; isro says "null"
    auto refusal = fixture(line, line == "3.8" ? "srvr_no_quorum.txt" : "srvr_not_serving.txt");
    return {{"srvr", answer(refusal)},
            {"mntr", answer(refusal)},
            {"conf", answer(refusal)},
            {"isro", answer("null")},
            {"ruok", answer("imok")}};
  }
  std::string name = role == Role::leader ? "leader" : "follower";
  auto conf = replaced(fixture(line, "conf_" + name + ".txt"),
                       fmt::format("serverId={}\n", role == Role::leader ? 5 : 1), fmt::format("serverId={}\n", id));
  auto mntr = fixture(line, "mntr_" + name + ".txt");
  if (role == Role::leader)
    mntr = replaced(mntr, "zk_synced_followers\t4\n", fmt::format("zk_synced_followers\t{}\n", synced));
  return {{"srvr", answer(fixture(line, "srvr_" + name + ".txt"))},
          {"mntr", answer(mntr)},
          {"conf", answer(conf)},
          {"isro", answer("rw")},
          {"ruok", answer("imok")}};
}

// 3.5+ with no 4lw.commands.whitelist in zoo.cfg: srvr answers, every other word is refused.
std::map<std::string, ::fake::Script> default_whitelist(std::map<std::string, ::fake::Script> answers) {
  for (auto& [word, script] : answers)
    if (word != "srvr") script = answer(word + " is not executed because it is not in the whitelist.\n");
  return answers;
}

struct ServerSpec {
  std::string line;
  bool srvr_only_whitelist = false;
};

// Five fake servers zk-1..zk-5 (zk-5 leads); those in `down` refuse connections; without `quorum`
// the others are up but not serving.
class VersionedEnsemble {
 public:
  VersionedEnsemble(const std::vector<ServerSpec>& specs, const std::set<int>& down, bool quorum) {
    int synced = 4 - static_cast<int>(down.size());
    for (int id = 1; id <= 5; ++id) {
      auto name = fmt::format("zk-{}", id);
      if (down.contains(id)) {
        closed_.push_back(std::make_unique<ClosedPort>());
        servers_.push_back({name, "127.0.0.1", closed_.back()->port(), {}});
        continue;
      }
      const auto& spec = specs[static_cast<std::size_t>(id - 1)];
      auto role = !quorum ? Role::not_serving : id == 5 ? Role::leader : Role::follower;
      auto answers = answers_of(spec.line, role, id, synced);
      if (spec.srvr_only_whitelist) answers = default_whitelist(std::move(answers));
      peers_.push_back(std::make_unique<::fake::Peer>(std::move(answers)));
      servers_.push_back({name, "127.0.0.1", peers_.back()->port(), {}});
    }
  }

  // The probes, judged as `zkverify quorum --no-write` would.
  Report judge() const {
    ProbeLimits limits;
    limits.deadline = Clock::now() + 10s;
    EnsembleFacts facts{probe_servers(test_executor(), servers_, limits), std::nullopt, true};
    return zkverify::judge(facts);
  }
  [[nodiscard]] std::vector<ServerProbe> probe() const {
    ProbeLimits limits;
    limits.deadline = Clock::now() + 10s;
    return probe_servers(test_executor(), servers_, limits);
  }

 private:
  std::vector<std::unique_ptr<::fake::Peer>> peers_;
  std::vector<std::unique_ptr<ClosedPort>> closed_;
  std::vector<ServerAddress> servers_;
};

std::vector<ServerSpec> all_on(const std::string& line) { return std::vector<ServerSpec>(5, ServerSpec{line}); }

std::set<std::string> codes_of(const Report& report) {
  std::set<std::string> codes;
  for (const auto& finding : report.findings) codes.emplace(to_string(finding.code));
  return codes;
}

const zkverify::Finding* finding(const Report& report, const std::string& code) {
  for (const auto& found : report.findings)
    if (to_string(found.code) == code) return &found;
  return nullptr;
}

}  // namespace

TEST_CASE("fake 3.4 peers: every word answers, conf has no membership, mntr no quorum size",
          "[versions][four_letter]") {
  VersionedEnsemble ensemble(all_on("3.4"), {}, true);
  auto probes = ensemble.probe();
  REQUIRE(probes.size() == 5);
  for (const auto& probe : probes) {
    INFO(probe.address.name);
    CHECK(probe.refused_words.empty());
    REQUIRE(has_facts(probe.conf));
    CHECK(probe.conf->facts.members.empty());
    REQUIRE(has_facts(probe.mntr));
    CHECK_FALSE(probe.mntr->facts.quorum_size);
    CHECK(has_facts(probe.isro));
    CHECK(has_facts(probe.ruok));
  }
  CHECK(probes[4].conf->facts.server_id == 5);
  CHECK(probes[4].srvr->facts.mode == Mode::leader);
}

namespace {

// The verdict, the counts, the leader and each row of `old_line` and `current` are the same.
void check_same_verdicts(const Report& old_line, const Report& current) {
  CHECK(old_line.verdict == current.verdict);
  CHECK(old_line.expected_voters == current.expected_voters);
  CHECK(old_line.serving_voters == current.serving_voters);
  CHECK(old_line.leader == current.leader);
  REQUIRE(old_line.servers.size() == current.servers.size());
  for (std::size_t i = 0; i < current.servers.size(); ++i) {
    CHECK(old_line.servers[i].state == current.servers[i].state);
    CHECK(old_line.servers[i].id == current.servers[i].id);
  }
}

}  // namespace

TEST_CASE("every line's ensemble gets 3.8's verdicts: healthy, one down, no quorum", "[versions]") {
  struct Situation {
    std::string name;
    std::set<int> down;
    bool quorum;
    Verdict verdict;
  };
  for (const auto& situation :
       {Situation{"healthy", {}, true, Verdict::healthy}, Situation{"one down", {2}, true, Verdict::degraded},
        Situation{"no quorum", {3, 4, 5}, false, Verdict::critical}}) {
    auto current = VersionedEnsemble(all_on("3.8"), situation.down, situation.quorum).judge();
    CHECK(current.verdict == situation.verdict);
    auto current_codes = codes_of(current);
    current_codes.erase("voters-counted");
    for (const auto* line : {"3.4", "3.5", "3.6", "3.7", "3.9"}) {
      INFO(situation.name << ", line " << line);
      auto old_line = VersionedEnsemble(all_on(line), situation.down, situation.quorum).judge();
      check_same_verdicts(old_line, current);
      auto old_codes = codes_of(old_line);
      // 3.4 reports no membership: the voters are counted from the listed servers, and an info says so.
      if (std::string(line) == "3.4") CHECK(old_codes.contains("voters-counted"));
      old_codes.erase("voters-counted");
      CHECK(old_codes == current_codes);
    }
  }
}

TEST_CASE("the AdminServer's zabstate: 3.5.10 and 3.6+ name the phase, and before 3.5.10 the sidecar falls back",
          "[versions][sidecar]") {
  for (const auto& line : kLines) {
    if (!line.has_admin_server) continue;
    INFO("line " << line.line);
    CHECK(zkverify::parse_zabstate(fixture(line.line, "admin_zabstate_leader.json")) == "broadcast");
    if (line.line != "3.5")  // 3.5.10's answer names no server: one fixture stands for both
      CHECK(zkverify::parse_zabstate(fixture(line.line, "admin_zabstate_follower.json")) == "broadcast");
  }
  auto unknown = fixture("3.5", "admin_zabstate_before_3.5.10.json");
  CHECK_FALSE(zkverify::parse_zabstate(unknown));

  // The sidecar with --no-write on follower zk-1: zabstate proves sync where it exists...
  auto refusing = VersionedEnsemble(std::vector<ServerSpec>(5, ServerSpec{"3.5", true}), {}, true).judge();
  auto proved = judge_readiness(refusing, "zk-1", false, zabstate_phase(fixture("3.5", "admin_zabstate_leader.json")));
  CHECK(proved.proof == SyncProof::zabstate);
  CHECK(proved.ready);
  // ... before 3.5.10 it proves nothing: srvr's mode when mntr is refused too, else the leader's count.
  CHECK_FALSE(zabstate_phase(unknown));
  auto by_mode = judge_readiness(refusing, "zk-1", false, zabstate_phase(unknown));
  CHECK(by_mode.proof == SyncProof::srvr_mode);
  CHECK(by_mode.ready);
  auto answering = VersionedEnsemble(all_on("3.5"), {}, true).judge();
  auto by_count = judge_readiness(answering, "zk-1", false, zabstate_phase(unknown));
  CHECK(by_count.proof == SyncProof::synced_followers);
  CHECK(by_count.ready);
}

TEST_CASE("upgrading 3.4 to 3.5: mixed versions, and the line that lets 3.5 answer the words 3.4 did", "[versions]") {
  std::vector<ServerSpec> specs{{"3.4"}, {"3.4"}, {"3.4"}, {"3.5", true}, {"3.5", true}};
  auto report = VersionedEnsemble(specs, {}, true).judge();
  CHECK(report.verdict == Verdict::healthy);
  CHECK(report.leader == "zk-5");

  const auto* mixed = finding(report, "mixed-versions");
  REQUIRE(mixed);
  CHECK_THAT(mixed->message, Contains("3.4.14 on zk-1, zk-2, zk-3") && Contains("3.5.10 on zk-4, zk-5"));

  const auto* refused = finding(report, "not-whitelisted");
  REQUIRE(refused);
  CHECK(refused->severity == zkverify::Severity::info);
  CHECK_THAT(refused->message, Contains("mntr on zk-4,zk-5") && Contains("conf on zk-4,zk-5"));
  CHECK_THAT(refused->message, Contains("4lw.commands.whitelist=srvr,ruok,mntr,conf,isro"));
  CHECK_THAT(refused->message, Contains("the 3.4 servers answered these words without it"));
}

TEST_CASE("a 3.5+ ensemble refusing words, with no 3.4 server, is not told about 3.4", "[versions]") {
  std::vector<ServerSpec> specs(5, ServerSpec{"3.9", true});
  auto report = VersionedEnsemble(specs, {}, true).judge();
  const auto* refused = finding(report, "not-whitelisted");
  REQUIRE(refused);
  CHECK_THAT(refused->message, Contains("4lw.commands.whitelist=srvr,ruok,mntr,conf,isro"));
  CHECK_THAT(refused->message, !Contains("3.4"));
  CHECK(finding(report, "mixed-versions") == nullptr);
}

namespace {

// Jute, ZooKeeper's wire encoding: big-endian integers, length-prefixed strings and buffers.
class JuteOut {
 public:
  JuteOut& i32(std::int32_t value) { return put(static_cast<std::uint64_t>(static_cast<std::uint32_t>(value)), 4); }
  JuteOut& i64(std::int64_t value) { return put(static_cast<std::uint64_t>(value), 8); }
  JuteOut& boolean(bool value) {
    bytes_ += static_cast<char>(value ? 1 : 0);
    return *this;
  }
  JuteOut& buffer(const std::string& value) {
    i32(static_cast<std::int32_t>(value.size()));
    bytes_ += value;
    return *this;
  }
  [[nodiscard]] const std::string& bytes() const { return bytes_; }
  // A frame: its length first (as a buffer is written).
  [[nodiscard]] std::string framed() const { return JuteOut().buffer(bytes_).bytes(); }

 private:
  JuteOut& put(std::uint64_t value, int size) {
    for (int shift = (size - 1) * 8; shift >= 0; shift -= 8) bytes_ += static_cast<char>((value >> shift) & 0xff);
    return *this;
  }
  std::string bytes_;
};

class JuteIn {
 public:
  explicit JuteIn(std::string bytes) : bytes_(std::move(bytes)) {}
  std::int32_t i32() { return static_cast<std::int32_t>(take(4)); }
  std::int64_t i64() { return static_cast<std::int64_t>(take(8)); }
  bool boolean() { return take(1) != 0; }
  std::string buffer() {
    auto size = i32();
    if (size <= 0 || static_cast<std::size_t>(size) > bytes_.size() - at_) return {};
    auto value = bytes_.substr(at_, static_cast<std::size_t>(size));
    at_ += static_cast<std::size_t>(size);
    return value;
  }
  void skip_acl() {  // vector<ACL>: count, then perms, scheme, id
    for (auto count = i32(); count > 0; --count) {
      i32();
      buffer();
      buffer();
    }
  }

 private:
  std::uint64_t take(int size) {
    std::uint64_t value = 0;
    for (int i = 0; i < size && at_ < bytes_.size(); ++i)
      value = (value << 8) | static_cast<unsigned char>(bytes_[at_++]);
    return value;
  }
  std::string bytes_;
  std::size_t at_ = 0;
};

constexpr std::int32_t kCreate = 1, kDelete = 2, kExists = 3, kGetData = 4, kSync = 9, kPing = 11, kCreate2 = 15,
                       kCloseSession = -11;
constexpr std::int32_t kNoNode = -101, kNodeExists = -110, kUnimplemented = -6;

// ZooKeeper 3.4.14 as the C client meets it, on 127.0.0.1 port 0: sessions (resumed on a new
// connection), and create, delete, exists, getData, sync on an in-memory tree. Any other operation,
// create2 (op 15) among them, is answered ZUNIMPLEMENTED and the connection is then dropped, as
// 3.4.14's ZooKeeperServer.submitRequest hands it to UnimplementedRequestProcessor, whose
// sendCloseSession closes the connection (not the session).
class Wire34Server {
 public:
  Wire34Server() : listener_(loopback::bound_socket(true, port_)) {
    nodes_["/"] = Node{};
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Wire34Server() {
    ::shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    {
      std::lock_guard lock(mutex_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& thread : connections_) thread.join();
    ::close(listener_);
  }
  Wire34Server(const Wire34Server&) = delete;
  Wire34Server& operator=(const Wire34Server&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] int create2_requests() const { return create2_requests_; }
  [[nodiscard]] int connections() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(connections_.size());
  }
  // The czxid of the last node created (also once it is deleted).
  [[nodiscard]] std::int64_t last_czxid() const {
    std::lock_guard lock(mutex_);
    return last_czxid_;
  }

 private:
  struct Node {
    std::string data;
    std::int64_t czxid = 0;
  };

  void accept_loop() {
    for (;;) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;  // shut down
      std::lock_guard lock(mutex_);
      open_.insert(fd);
      connections_.emplace_back([this, fd] { serve(fd); });
    }
  }

  static bool read_exactly(int fd, char* into, std::size_t size) {
    while (size > 0) {
      auto n = ::recv(fd, into, size, 0);
      if (n <= 0) return false;
      into += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  static std::optional<std::string> read_frame(int fd) {
    char length[4];
    if (!read_exactly(fd, length, 4)) return std::nullopt;
    auto size = static_cast<std::size_t>(JuteIn(std::string(length, 4)).i32());
    if (size > (1u << 20)) return std::nullopt;
    std::string frame(size, '\0');
    if (!read_exactly(fd, frame.data(), size)) return std::nullopt;
    return frame;
  }
  static void send_all(int fd, const std::string& bytes) {
    static_cast<void>(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL));
  }

  void serve(int fd) {
    if (auto hello = read_frame(fd)) {
      send_all(fd, handshake(*hello));
      while (auto frame = read_frame(fd)) {
        auto [reply, keep_open] = answer(*frame);
        send_all(fd, reply);
        if (!keep_open) break;
      }
    }
    std::lock_guard lock(mutex_);
    open_.erase(fd);
    ::close(fd);
  }

  // ConnectRequest: protocol version, last zxid seen, timeout, session id, password[, read-only].
  std::string handshake(const std::string& hello) {
    JuteIn in(hello);
    in.i32();
    in.i64();
    auto timeout = in.i32();
    auto session = in.i64();
    std::lock_guard lock(mutex_);
    if (session == 0) session = (std::int64_t{1} << 56) | ++sessions_;  // the top byte: server id 1
    return JuteOut().i32(0).i32(timeout).i64(session).buffer(std::string(16, '\0')).boolean(false).framed();
  }

  std::string stat_of(const Node& node) const {
    JuteOut out;
    out.i64(node.czxid).i64(node.czxid).i64(0).i64(0).i32(0).i32(0).i32(0).i64(0);
    out.i32(static_cast<std::int32_t>(node.data.size())).i32(0).i64(node.czxid);
    return out.bytes();
  }

  // The reply to one request, and whether the connection stays open after it.
  std::pair<std::string, bool> answer(const std::string& frame) {
    JuteIn in(frame);
    auto xid = in.i32();
    auto type = in.i32();
    std::lock_guard lock(mutex_);
    // ReplyHeader (xid, zxid, error), then the response, in one frame.
    auto reply = [&](std::int32_t error, const std::string& body = {}) {
      return JuteOut().buffer(JuteOut().i32(xid).i64(zxid_).i32(error).bytes() + body).bytes();
    };
    if (type == kPing) return {reply(0), true};
    if (type == kCloseSession) return {reply(0), false};
    if (type == kCreate) return {create(in, reply), true};
    if (type == kExists || type == kGetData || type == kSync || type == kDelete)
      return {read_or_delete(type, in, reply), true};
    if (type == kCreate2) ++create2_requests_;
    return {reply(kUnimplemented), false};
  }

  template <class Reply>
  std::string create(JuteIn& in, Reply& reply) {
    auto path = in.buffer();
    auto data = in.buffer();
    in.skip_acl();
    auto flags = in.i32();
    if (flags & 2) path += fmt::format("{:010}", sequence_++);
    auto parent = path.substr(0, std::max<std::size_t>(path.rfind('/'), 1));
    if (!nodes_.contains(parent)) return reply(kNoNode);
    if (nodes_.contains(path)) return reply(kNodeExists);
    last_czxid_ = ++zxid_;
    nodes_[path] = Node{data, zxid_};
    return reply(0, JuteOut().buffer(path).bytes());
  }

  template <class Reply>
  std::string read_or_delete(std::int32_t type, JuteIn& in, Reply& reply) {
    auto path = in.buffer();
    if (type == kSync) return reply(0, JuteOut().buffer(path).bytes());
    auto node = nodes_.find(path);
    if (node == nodes_.end()) return reply(kNoNode);
    if (type == kExists) return reply(0, stat_of(node->second));
    if (type == kGetData) return reply(0, JuteOut().buffer(node->second.data).bytes() + stat_of(node->second));
    nodes_.erase(node);
    ++zxid_;
    return reply(0);
  }

  std::uint16_t port_ = 0;  // before listener_: its initialiser sets it
  int listener_;
  std::thread acceptor_;
  mutable std::mutex mutex_;  // guards what follows
  std::vector<std::thread> connections_;
  std::set<int> open_;
  std::map<std::string, Node> nodes_;
  std::int64_t zxid_ = std::int64_t{1} << 32;  // epoch 1
  std::int64_t last_czxid_ = 0;
  std::int64_t sessions_ = 0;
  int sequence_ = 0;
  std::atomic<int> create2_requests_{0};
};

}  // namespace

TEST_CASE("the C client's create on a 3.4 server: create, then exists, and no create2 to drop the connection",
          "[versions][c_keeper]") {
  Wire34Server server;
  auto keeper = test_keepers().open({{"zk34", "127.0.0.1", server.port(), {}}}, KeeperOptions{});
  auto deadline = Clock::now() + 20s;
  REQUIRE(keeper->wait_connected(deadline) == ZkError::ok);

  auto created = create_now(*keeper, "/zkverify", "marker", CreateMode::persistent, deadline);
  REQUIRE(created.error == ZkError::ok);
  CHECK(created.path == "/zkverify");
  CHECK(created.stat.czxid.value == static_cast<std::uint64_t>(server.last_czxid()));
  auto next = create_now(*keeper, "/zkverify/seq-", "", CreateMode::ephemeral_sequential, deadline);
  REQUIRE(next.error == ZkError::ok);
  CHECK(next.path == "/zkverify/seq-0000000000");
  CHECK(next.stat.czxid.value == static_cast<std::uint64_t>(server.last_czxid()));
  // No create2 was sent, so no connection was dropped: nothing was ever resent.
  CHECK(server.create2_requests() == 0);
  CHECK(server.connections() == 1);

  SECTION("an error of the create itself is the caller's, not retried") {
    auto orphan = create_now(*keeper, "/missing/child", "", CreateMode::persistent, deadline);
    CHECK(orphan.error == ZkError::no_node);
    CHECK(server.connections() == 1);
  }
  CHECK(keeper->close(Clock::now() + 5s));
}

TEST_CASE("the round trip through a 3.4 server: written, read back, its czxid known, deleted",
          "[versions][round_trip][c_keeper]") {
  Wire34Server server;
  RoundTripPlan plan;
  plan.servers = {{"zk34", "127.0.0.1", server.port(), {}}};
  plan.namespace_path = "/zkverify";
  plan.payload = "round trip payload";
  plan.deadline = Clock::now() + 20s;
  auto trip = run_round_trip(plan, test_keepers());
  CHECK(trip.namespace_error == ZkError::ok);
  REQUIRE(trip.write_error == ZkError::ok);
  REQUIRE(trip.write_zxid);
  CHECK(trip.write_zxid->value == static_cast<std::uint64_t>(server.last_czxid()));
  REQUIRE(trip.reads.size() == 1);
  CHECK(trip.reads[0].error == ZkError::ok);
  CHECK(trip.reads[0].bytes_match);
  CHECK(trip.reads[0].session_server_id == 1);
  CHECK(trip.removal_error == ZkError::ok);
  CHECK(server.create2_requests() == 0);
}
