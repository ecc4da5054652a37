#pragma once
// Linux's /proc/net/tcp table, as far as the TLS relay needs it: which socket (by inode) is the
// client end of a loopback connection, so that the relay serves only its own process's sockets.

#include <cstdint>
#include <optional>
#include <string_view>

namespace zkverify {

// The inode of the socket in `table` (the text of /proc/<pid>/net/tcp) whose local address is
// 127.0.0.1:`local_port` and remote address 127.0.0.1:`remote_port`; none when no line matches or
// its inode is 0 (a socket in TIME_WAIT belongs to nobody).
std::optional<std::uint64_t> loopback_socket_inode(std::string_view table, std::uint16_t local_port,
                                                   std::uint16_t remote_port);

// The inode of a /proc/<pid>/fd link's target "socket:[12345]"; none for any other target.
std::optional<std::uint64_t> socket_inode_of_link(std::string_view target);

}  // namespace zkverify
