#pragma once
// Credentials a session presents (zoo_add_auth), and the pure parser of the file that holds them.
// The password is a secret: nothing here prints it, and no error message quotes the file's text.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/facts/failure.hpp"

namespace zkverify {

struct Credentials {
  std::string scheme;  // "digest": the only scheme this C client can use (it has no SASL)
  std::string user;
  std::string password;  // never printed, logged or stored
};

// What zoo_add_auth is given for `credentials`: "USER:PASSWORD" for digest.
std::string auth_data(const Credentials& credentials);

// SASL as zkverify's sessions speak it, in the relay between the C client (built without SASL) and
// each server (probes/relay.hpp): DIGEST-MD5 with a user and password, as a JAAS Client section's
// DigestLoginModule does.
struct SaslSettings {
  std::string mechanism = "DIGEST-MD5";  // or GSSAPI (Kerberos)
  std::string user;                      // DIGEST-MD5's; GSSAPI's principal comes from its credentials
  std::string password;                  // DIGEST-MD5's: never printed, logged or stored
  std::string service = "zookeeper";
  // The name the mechanism gives the server: DIGEST-MD5's digest-uri host, "zk-sasl-md5" as every
  // ZooKeeper server expects it; empty: each server's own host (GSSAPI: zookeeper/HOST@REALM).
  std::string host = "zk-sasl-md5";
};

// What a server, or this host's SASL library, answered when a session's SASL failed.
struct SaslRefusal {
  std::string server;     // the listed name
  std::string mechanism;  // "DIGEST-MD5"
  std::string user;
  std::string why;         // says who refused: "the server refused it (...)", "this host's SASL library: ..."
  bool by_server = false;  // the server answered the exchange with an error
};

// What Kerberos says of zkverify's own GSSAPI credentials, read beside each check: when they stop
// working. Whether that is near is the judge's call.
struct KerberosFacts {
  using Time = std::chrono::system_clock::time_point;
  std::string source{};                   // "keytab FILE" or "ticket cache TYPE:NAME"
  bool from_keytab = false;               // tickets come anew from the keytab: their end does not matter
  std::string principal{};                // empty when none was found
  std::optional<Time> ticket_ends{};      // the ticket-granting ticket's end
  std::optional<Time> renewable_until{};  // a ticket cache's: how long `kinit -R` can extend it
  // The KDC's word (a keytab's read): the principal's password or account expires, and its keys
  // stop working.
  std::optional<Time> principal_expires{};
  std::string error{};  // what Kerberos said when it could not read them
  Time read_at{};       // the wall clock the times above are judged by
};

// "pzoo-0 refused SASL DIGEST-MD5 as kafka: WHY: what that usually means" when the server refused;
// "SASL GSSAPI with pzoo-0 failed: WHY" otherwise. Never the password.
std::string describe(const SaslRefusal& refusal);

// A password file's text: one line (a trailing line end tolerated), not empty. Throws BadInput
// saying what is wrong, never quoting the text.
std::string parse_password(std::string_view text);

// One line "digest:USER:PASSWORD" (a trailing "\n" or "\r\n" tolerated; the password may hold ':').
// Throws BadInput saying what is wrong, never quoting the text (it may be the secret).
Credentials parse_credentials(std::string_view text);

}  // namespace zkverify
