// The TLS relay's reader of /proc/net/tcp and of /proc/self/fd links: any text. Nothing may throw;
// an inode found is never 0 and belongs to a line naming both ports.
#include <string>

#include "fuzz_check.hpp"
#include "model/parse/proc_net.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = fuzz::text_of(data, size);
  std::uint16_t local = size > 1 ? static_cast<std::uint16_t>(data[0] << 8 | data[1]) : 0;
  std::uint16_t remote = size > 3 ? static_cast<std::uint16_t>(data[2] << 8 | data[3]) : 0;
  if (auto inode = zkverify::loopback_socket_inode(text, local, remote)) FUZZ_CHECK(*inode != 0);
  if (auto inode = zkverify::socket_inode_of_link(text)) FUZZ_CHECK(text.starts_with("socket:["));
  return 0;
}
