#pragma once
// The ensemble's clients as the ensemble shows them: the ephemeral znodes they hold under their own
// sessions (a Kafka broker's /brokers/ids/N, /controller; Solr's /live_nodes/...). A registration
// held by a new session means the old one ended: that client lost its session.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/facts/errors.hpp"

namespace zkverify {

struct Registration {
  std::string path;           // the ephemeral znode
  std::int64_t owner = 0;     // the session that holds it (its ephemeralOwner)
  std::int64_t ctime_ms = 0;  // when it was created, by the creating server's clock (ms since the epoch)
  std::string data;           // its data, kept only for a watched path's own node (/controller's broker)
};

// One --clients path as read through one session: the path itself when it is ephemeral, and its
// ephemeral children.
struct ClientPathRead {
  std::string path;
  ZkError error = ZkError::not_attempted;  // no_node: nothing there (a fact, not a failure)
  std::vector<Registration> held;          // sorted by path
  std::string data;                        // the path's own data (/controller_epoch's counter)
};

// One client connection as `cons` lists it: its session and the timeout the server granted it.
struct ClientConnection {
  std::string client;  // "127.0.0.1:53918"
  std::int64_t session = 0;
  std::chrono::milliseconds timeout{0};
};
struct ConsFacts {
  std::vector<ClientConnection> connections;  // those with a session (a connection still handshaking has none)
};

// The paths `--clients kafka` stands for: the brokers' registrations, the controller and its epoch.
inline constexpr std::string_view kKafkaPreset = "kafka";
std::vector<std::string> kafka_client_paths();

// A session id as ZooKeeper prints it: "0x" and lowercase hex.
std::string session_text(std::int64_t session);

}  // namespace zkverify
