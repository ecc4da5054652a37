#pragma once
// Pure parsers of what ZooKeeper 3.8 servers answer. Each recognises the refusal forms first
// (not serving, not whitelisted), then parses; anything else is `malformed` with a reason.
// Formats: see the captures from a real 3.8.0 server in tests/data/.

#include <string>
#include <string_view>

#include "model/facts/facts.hpp"

namespace zkverify {

// The four-letter readers' detail for an empty reply: the server accepted the connection and closed it.
inline constexpr std::string_view kClosedWithoutReply =
    "closed the connection without a reply (a server does so to a host over its maxClientCnxns, and while it starts "
    "or stops)";

// srvr and stat (stat adds a client list, which is skipped).
Reply<SrvrFacts> parse_srvr(std::string_view reply);
// mntr: tab-separated key/value lines.
Reply<MntrFacts> parse_mntr(std::string_view reply);
// conf: key=value lines, then "membership:" and the server.N lines, then version=.
Reply<ConfFacts> parse_conf(std::string_view reply);
// isro: "rw" or "ro"; "null" means not serving.
Reply<IsroFacts> parse_isro(std::string_view reply);
// ruok: "imok" (which says nothing about quorum).
Reply<RuokFacts> parse_ruok(std::string_view reply);
// cons: one line per connection, "/HOST:PORT[N](...,sid=0x...,...,to=MS,...)"; lines without a
// session (a connection still handshaking, cons's own) are left out.
Reply<ConsFacts> parse_cons(std::string_view reply);

// One "server.N=quorum:election[:role][;client]" line. Returns false when it is not one.
bool parse_member_line(std::string_view line, Member& member);

// AdminServer JSON (/commands/monitor, /commands/configuration, /commands/voting_view).
Reply<MntrFacts> parse_admin_monitor(std::string_view body);
Reply<ConfFacts> parse_admin_conf(std::string_view body);         // server_id only (voters_only: see voting_view)
Reply<ConfFacts> parse_admin_voting_view(std::string_view body);  // members only: the voters
// /commands/connections: cons as JSON, plain and secure connections, those with a session only.
Reply<ConsFacts> parse_admin_connections(std::string_view body);

Mode parse_mode(std::string_view text);
std::string_view to_string(Mode mode);

}  // namespace zkverify
