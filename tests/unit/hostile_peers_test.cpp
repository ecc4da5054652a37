// Hostile peers, by the numbers (issue 13): one table of misbehaving servers. Each row puts one
// hostile peer beside four healthy ones (a leader and three followers, fake four-letter peers on
// loopback), probes them all at once, judges and renders the report, and asserts:
//   - the hostile server gets a clear error of its own (its row, or the finding that names it);
//   - the wait ends by the limit that should end it: the per-exchange timeout and the overall
//     deadline are far apart, and slow rows run twice (each limit the shorter once), so a wait capped
//     by the wrong one shows as a wait near the longer limit;
//   - the four healthy servers are still fully judged (state, zxid, node count, no error), the
//     leader still named;
//   - the text and JSON reports stay valid UTF-8 with no NUL byte, and the JSON parses.
// The sanitizer builds (ASan+UBSan) run the same table: no crash, no leak. The last rows are
// ZooKeeper-protocol peers the real C client (c_keeper) opens a session to: the open fails by its
// deadline with a clear error, and closing the session leaks nothing.

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fake_peer.hpp"
#include "loopback_port.hpp"
#include "model/judge/checks.hpp"
#include "model/parse/parsers.hpp"
#include "probes/c_keeper.hpp"
#include "probes/four_letter.hpp"
#include "test_data.hpp"
#include "test_executor.hpp"
#include "verifier/check/ensemble_check.hpp"

using namespace zkverify;
using namespace zkverify::probes;
using namespace zkverify::verifier;
using namespace std::chrono_literals;
using namespace std::string_literals;
using Catch::Matchers::Contains;
using ::fake::Behaviour;

namespace {

// The two limits: the shorter ends a slow row; a row capped by the wrong one would wait the longer.
constexpr auto kShort = 400ms;
constexpr auto kLong = 30s;
// What a row may take beyond its shorter limit: the healthy servers' exchanges, and a loaded machine
// under the sanitizers. Still far below kLong: a wait capped by the longer limit cannot pass.
constexpr auto kMargin = 5s;

constexpr std::string_view kRefused = " is not executed because it is not in the whitelist.\n";

std::string srvr_text(std::string_view mode, std::string_view zxid = "0x500000007",
                      std::string_view version = "3.8.0") {
  return fmt::format(
      "Zookeeper version: {}\nReceived: 12\nConnections: 1\nOutstanding: 0\nZxid: {}\nMode: {}\n"
      "Node count: 9\n",
      version, zxid, mode);
}

// A server that answers srvr (`srvr_reply`) and refuses every other word, like kubernetes-kafka's
// whitelist; "GET " (its AdminServer on the same port) behaves as `admin`.
std::unique_ptr<::fake::Peer> whitelisted_peer(::fake::Script srvr,
                                               ::fake::Script admin = {Behaviour::close_at_once, ""}) {
  return std::make_unique<::fake::Peer>(
      std::map<std::string, ::fake::Script>{{"srvr", std::move(srvr)},
                                            {"mntr", {Behaviour::answer, "mntr" + std::string(kRefused)}},
                                            {"conf", {Behaviour::answer, "conf" + std::string(kRefused)}},
                                            {"isro", {Behaviour::answer, "isro" + std::string(kRefused)}},
                                            {"ruok", {Behaviour::answer, "imok"}},
                                            {"GET ", std::move(admin)}});
}

std::string http_response(std::string_view status, std::string_view headers, std::string_view body) {
  return fmt::format("HTTP/1.1 {}\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{}", status, headers, body.size(),
                     body);
}

using loopback::closed_port;

// neither: a row that no limit should end (refused, too large, a bad reply) gets both limits long,
// so a starved machine cannot turn its outcome into a timeout (CI once saw the 10 MB AdminServer
// reply arrive after a 400 ms exchange timeout); its bound still catches a wait for either limit.
enum class Shorter { exchange, deadline, neither };

ProbeLimits limits_for(Shorter shorter) {
  ProbeLimits limits;
  limits.deadline = Clock::now() + (shorter == Shorter::deadline ? std::chrono::milliseconds(kShort) * 4 : kLong);
  limits.connect_timeout = limits.exchange_timeout =
      shorter == Shorter::exchange ? std::chrono::milliseconds(kShort) : std::chrono::milliseconds(kLong);
  return limits;
}

// What a row may take: its shorter limit and the margin.
std::chrono::milliseconds bound_for(Shorter shorter) {
  switch (shorter) {
    case Shorter::exchange: return std::chrono::milliseconds(kShort) + kMargin;
    case Shorter::deadline: return kShort * 4 + kMargin;
    case Shorter::neither: break;
  }
  return kMargin;
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    i += length;
  }
  return true;
}

struct Row {
  std::string what;
  // The hostile peer (none: `port` refuses), and whether its AdminServer is asked.
  std::function<std::unique_ptr<::fake::Peer>()> make;
  bool admin = false;
  bool slow = false;  // ends only by a limit: run once with each limit the shorter
  // Connections the hostile peer saw: five words (srvr, then the optional ones while it answers),
  // then one per AdminServer command until a transport failure (after which nothing more is asked).
  int connections = 0;
  // The hostile server's row and probe, and the whole report.
  std::function<void(const ServerRow&, const ServerProbe&, const Report&)> expect;
  // At once, as the peer counts them: a silent srvr is followed by the question whether the port speaks
  // TLS, on a connection of its own, while a peer that never reads has not yet seen the first one closed.
  int max_concurrent = 1;
};

struct Outcome {
  Report report;
  std::vector<ServerProbe> probes;
  std::chrono::milliseconds took{};
  int hostile_connections = 0;
  int hostile_max_concurrent = 0;
  std::uint64_t hostile_streamed = 0;
};

// Four healthy servers and the row's hostile one, probed, judged.
Outcome run_row(const Row& row, Shorter shorter) {
  auto leader = whitelisted_peer({Behaviour::answer, srvr_text("leader")});
  std::vector<std::unique_ptr<::fake::Peer>> followers;
  for (int i = 0; i < 3; ++i) followers.push_back(whitelisted_peer({Behaviour::answer, srvr_text("follower")}));
  auto hostile = row.make ? row.make() : nullptr;
  std::vector<ServerAddress> servers{{"good-0", "127.0.0.1", leader->port(), {}}};
  for (int i = 0; i < 3; ++i)
    servers.push_back({fmt::format("good-{}", i + 1), "127.0.0.1", followers[static_cast<std::size_t>(i)]->port(), {}});
  auto port = hostile ? hostile->port() : closed_port();
  servers.push_back({"hostile", "127.0.0.1", port, row.admin ? std::optional(port) : std::nullopt});

  Outcome outcome;
  auto limits = limits_for(shorter);
  auto start = Clock::now();
  outcome.probes = probe_servers(test_executor(), servers, limits);
  outcome.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  outcome.report = judge(EnsembleFacts{outcome.probes, std::nullopt, true});
  if (hostile) {
    outcome.hostile_connections = hostile->connections();
    outcome.hostile_max_concurrent = hostile->max_concurrent();
    outcome.hostile_streamed = hostile->bytes_streamed();
  }
  return outcome;
}

bool has_finding(const Report& report, std::string_view code, std::string_view about) {
  return std::ranges::any_of(report.findings, [&](const Finding& f) {
    return to_string(f.code) == code && (f.server == about || f.message.find(about) != std::string::npos);
  });
}

void check_healthy_rows(const Report& report) {
  REQUIRE(report.servers.size() == 5);
  // The healthy leader is named, unless the hostile server claims to lead too (then none is).
  if (!has_finding(report, "multiple-leaders", "hostile")) CHECK(report.leader == std::optional<std::string>("good-0"));
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = report.servers[i];
    INFO(row.name);
    CHECK(row.name == fmt::format("good-{}", i));
    CHECK(row.state == (i == 0 ? ServerState::leader : ServerState::follower));
    CHECK(row.zxid == std::optional(Zxid{0x500000007}));
    CHECK(row.node_count == std::optional<std::int64_t>(9));
    CHECK(row.error.empty());
  }
}

void check_rendered(const Report& report) {
  for (auto format : {OutputFormat::text, OutputFormat::json}) {
    auto text = render(report, format);
    CHECK(valid_utf8(text));
    CHECK(text.find('\0') == std::string::npos);
    CHECK_THAT(text, Contains("hostile"));
    if (format == OutputFormat::json) CHECK_NOTHROW(nlohmann::json::parse(text));
  }
}

// What every AdminServer row expects of the hostile server: srvr still judged, its AdminServer named.
void expect_admin_error(const ServerRow& row, const ServerProbe& probe, std::string_view says) {
  CHECK(row.state == ServerState::follower);
  CHECK(row.error.empty());
  CHECK_THAT(probe.admin_error, Contains("AdminServer 127.0.0.1:") && Contains(std::string(says)));
  CHECK_FALSE(has_facts(probe.mntr));
}

// Rows whose transport misbehaves: refused, silent, dripping, flooding.
std::vector<Row> transport_rows() {
  const std::string one_gib_header = "Zookeeper version: 3.8.0\nZxid: 0x500000007\nMode: follower\nNode count: ";
  return {{"refuses the connection", nullptr, false, false, 0,
           [](const ServerRow& row, const ServerProbe&, const Report& report) {
             CHECK(row.state == ServerState::unreachable);
             CHECK(row.error == "connection refused");
             CHECK(has_finding(report, "unreachable", "hostile"));
           }},
          {"accepts and never answers",
           [] {
             return whitelisted_peer({Behaviour::stall, ""});
           },
           false, true, 2,  // srvr, then the TLS question
           [](const ServerRow& row, const ServerProbe& probe, const Report&) {
             CHECK(row.state == ServerState::unreachable);
             CHECK(row.error == "connected, but no reply within the deadline");
             CHECK(probe.srvr_exchange.tls_failure == TlsFailure::none);  // a silent plain peer is no TLS port
           },
           2},
          {"drips one byte a second",
           [] {
             return whitelisted_peer({Behaviour::drip, "Zookeeper version: ", 1000ms});
           },
           false, true, 1,
           [](const ServerRow& row, const ServerProbe&, const Report&) {
             CHECK(row.state == ServerState::unreachable);
             CHECK_THAT(row.error, Contains("reply did not end within the deadline"));
           }},
          {"a 1 GiB reply",
           [=] {
             return whitelisted_peer({Behaviour::stream, one_gib_header, 20ms, 1ull << 30});
           },
           false, false, 1,
           [](const ServerRow& row, const ServerProbe& probe, const Report&) {
             CHECK(row.state == ServerState::unreachable);
             CHECK(probe.srvr_exchange.error == ProbeError::reply_too_large);
             CHECK_THAT(row.error, Contains("524288 bytes"));
             CHECK(probe.srvr_exchange.reply.size() <= 524288 + 4096);  // read no further than the cap
           }}};
}

// Rows whose reply misbehaves: bytes no srvr has, or a leader of another epoch.
std::vector<Row> reply_rows() {
  return {
      {"closed at once, as a server over maxClientCnxns does",
       [] {
         return whitelisted_peer({Behaviour::close_at_once, ""});
       },
       false, false, 5,
       [](const ServerRow& row, const ServerProbe&, const Report& report) {
         CHECK(row.state == ServerState::bad_reply);
         CHECK(row.error == kClosedWithoutReply);
         CHECK_THAT(row.error, Contains("maxClientCnxns"));
         auto finding = std::ranges::find(report.findings, FindingCode::bad_reply, &Finding::code);
         REQUIRE(finding != report.findings.end());
         CHECK(finding->message ==
               "hostile closed the connection without a reply (a server does so to a host over "
               "its maxClientCnxns, and while it starts or stops)");
       }},
      {"NUL bytes in the reply",
       [] {
         return whitelisted_peer({Behaviour::answer, "Zookeeper version: 3.8.0\0\0\nZxid: 0x5\0\0\nMode: follower\n"s});
       },
       false, false, 5,
       [](const ServerRow& row, const ServerProbe&, const Report& report) {
         CHECK(row.state == ServerState::bad_reply);
         CHECK_THAT(row.error, Contains("bad Zxid '0x5\\x00\\x00'"));
         CHECK(has_finding(report, "bad-reply", "hostile"));
       }},
      {"invalid UTF-8 in the Mode",
       [] {
         return whitelisted_peer({Behaviour::answer, srvr_text("\xc3\x28leader\xff")});
       },
       false, false, 5,
       [](const ServerRow& row, const ServerProbe&, const Report&) {
         CHECK(row.state == ServerState::bad_reply);
         CHECK_THAT(row.error, Contains("unknown Mode '\\xc3(leader\\xff'"));
       }},
      {"invalid UTF-8 in the version",
       [] {
         return whitelisted_peer({Behaviour::answer, srvr_text("follower", "0x500000007", "3.9.\xff\xfe\xc3")});
       },
       false, false, 5,
       [](const ServerRow& row, const ServerProbe&, const Report& report) {
         CHECK(row.state == ServerState::follower);  // a version is no reason to doubt the rest
         CHECK(has_finding(report, "mixed-versions", ""));
       }},
      {"claims to lead another epoch",
       [] {
         return whitelisted_peer({Behaviour::answer, srvr_text("leader", "0x900000001")});
       },
       false, false, 5,
       [](const ServerRow& row, const ServerProbe&, const Report& report) {
         CHECK(row.state == ServerState::leader);
         CHECK(row.zxid == std::optional(Zxid{0x900000001}));
         CHECK(has_finding(report, "multiple-leaders", "hostile"));
         CHECK(report.verdict == Verdict::critical);
       }}};
}

std::vector<Row> four_letter_rows() {
  auto rows = transport_rows();
  auto replies = reply_rows();
  rows.insert(rows.end(), replies.begin(), replies.end());
  return rows;
}

// The AdminServer rows: srvr answers (a follower), every other word is refused, its AdminServer is hostile.
std::vector<Row> admin_rows() {
  return {
      {"AdminServer: a redirect loop",
       [] {
         return whitelisted_peer(
             {Behaviour::answer, srvr_text("follower")},
             {Behaviour::answer, http_response("302 Found", "Location: /commands/monitor\r\n", "")});
       },
       true, false, 8,
       [](const ServerRow& row, const ServerProbe& probe, const Report&) {
         expect_admin_error(row, probe, "HTTP 302");
       }},
      {"AdminServer: slow headers",
       [] {
         return whitelisted_peer({Behaviour::answer, srvr_text("follower")},
                                 {Behaviour::drip, "HTTP/1.1 200 OK\r\nX-Slow: "});
       },
       true, true, 6,
       [](const ServerRow& row, const ServerProbe& probe, const Report&) {
         expect_admin_error(row, probe, "no reply within the deadline");
       }},
      {"AdminServer: a 10 MB JSON",
       [] {
         std::string body = "{\"server_state\": \"follower\", \"pad\": \"" + std::string(10 * 1024 * 1024, 'x') + "\"}";
         return whitelisted_peer(
             {Behaviour::answer, srvr_text("follower")},
             {Behaviour::answer, http_response("200 OK", "Content-Type: application/json\r\n", body)});
       },
       true, false, 6,
       [](const ServerRow& row, const ServerProbe& probe, const Report&) {
         expect_admin_error(row, probe, "reply exceeded 524288 bytes");
       }},
      {"AdminServer: a chunked body that never ends",
       [] {
         return whitelisted_peer(
             {Behaviour::answer, srvr_text("follower")},
             {Behaviour::chunks_forever, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"});
       },
       true, true, 6,
       [](const ServerRow& row, const ServerProbe& probe, const Report&) {
         // Cut at the size cap or at the limit, whichever comes first: either is named.
         CHECK(row.state == ServerState::follower);
         CHECK_THAT(probe.admin_error, Contains("AdminServer 127.0.0.1:"));
         CHECK((probe.admin_error.find("within the deadline") != std::string::npos ||
                probe.admin_error.find("reply exceeded") != std::string::npos));
       }},
  };
}

std::vector<Row> matrix() {
  auto rows = four_letter_rows();
  for (auto& row : admin_rows()) rows.push_back(std::move(row));
  return rows;
}

}  // namespace

TEST_CASE("hostile peers: each gets a clear error of its own by its limit, and the others are fully judged",
          "[hostile]") {
  for (const auto& row : matrix()) {
    auto runs = row.slow ? std::vector{Shorter::exchange, Shorter::deadline} : std::vector{Shorter::neither};
    for (auto shorter : runs) {
      INFO(row.what << (shorter == Shorter::exchange   ? ", the exchange timeout the shorter"
                        : shorter == Shorter::deadline ? ", the deadline the shorter"
                                                       : ", both limits long"));
      auto outcome = run_row(row, shorter);
      INFO("took " << outcome.took.count() << " ms");
      CHECK(outcome.took < bound_for(shorter));
      check_healthy_rows(outcome.report);
      REQUIRE(outcome.report.servers.size() == 5);
      row.expect(outcome.report.servers[4], outcome.probes[4], outcome.report);
      check_rendered(outcome.report);
      CHECK(outcome.hostile_connections == row.connections);
      // A hostile server is never held by more than one connection of ours, and never read whole.
      CHECK(outcome.hostile_max_concurrent <= row.max_concurrent);
      CHECK(outcome.hostile_streamed < 64ull * 1024 * 1024);
    }
  }
}

TEST_CASE("hostile peers: the matrix counts its rows", "[hostile]") {
  // README states how many cases the matrix has: keep it in step (13 here, 3 handshake cases below).
  CHECK(matrix().size() == 13);
}

namespace {

// A ZooKeeper-protocol peer the C client connects to: `script` for everything (the handshake's
// first four bytes, its length, are no word it knows).
struct HandshakeRow {
  std::string what;
  ::fake::Script script;
};

}  // namespace

TEST_CASE("hostile peers: a ZooKeeper peer that stalls or sends garbage in the C client's handshake",
          "[hostile][c_keeper]") {
  std::vector<HandshakeRow> rows{
      {"stalls", {Behaviour::stall, ""}},
      {"garbage, then closes", {Behaviour::answer, "\x16\x03\x01 not ZooKeeper at all\r\n"}},
      // A length prefix of 2 GiB - 1, then a byte a second: the client must neither wait for it nor allocate it.
      {"a 2 GiB length, then a drip", {Behaviour::drip, std::string("\x7f\xff\xff\xff\x00\x00", 6), 1000ms}},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    ::fake::Peer peer({}, row.script);
    KeeperOptions options;
    // Far longer than the deadline plus the margin (the C client drops a silent connection after two
    // thirds of it: 20 s): a wait ended by the session timeout, not the deadline, fails the timing checks.
    // With the 4 s it had, a wait capped at the session timeout still passed them.
    options.session_timeout = kLong;
    auto keeper = test_keepers().open({{"hostile", "127.0.0.1", peer.port(), {}}}, options);
    auto start = Clock::now();
    auto deadline = start + kShort * 2;
    auto connected = keeper->wait_connected(deadline);
    CHECK(Clock::now() < deadline + kMargin);
    CHECK(connected == ZkError::deadline_exceeded);
    CHECK(keeper->state() == SessionState::connecting);
    CHECK(keeper->connected_server().empty());
    CHECK_FALSE(keeper->session_id());
    // A request queued meanwhile is answered by its own deadline, not the session timeout.
    Expect<GetResult> pending;
    keeper->get("/", pending.callback());
    auto got = pending.await(Clock::now() + kShort);
    CHECK(got.error != ZkError::ok);
    // zookeeper_close joins the client's threads: milliseconds, or seconds for a process that gets no
    // CPU (the sanitizers' unit tests run at the lowest priority beside the integration tests).
    CHECK(keeper->close(Clock::now() + kMargin));
    CHECK(Clock::now() < start + kShort * 3 + kMargin * 2);
    CHECK(peer.connections() >= 1);  // the client did reach it: the wait was the handshake's
  }
}
