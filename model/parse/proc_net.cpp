#include "model/parse/proc_net.hpp"

#include <charconv>
#include <vector>

namespace zkverify {

namespace {

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    auto end = line.find_first_of(" \t", at);
    if (end == std::string_view::npos) end = line.size();
    if (end > at) fields.push_back(line.substr(at, end - at));
    at = end;
  }
  return fields;
}

template <class Number>
std::optional<Number> number(std::string_view text, int base) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "0100007F:1F90": 127.0.0.1 (the kernel prints the address in its own byte order) and port 8080.
bool is_loopback_endpoint(std::string_view field, std::uint16_t port) {
  if (field.size() != 13 || field[8] != ':' || field.substr(0, 8) != "0100007F") return false;
  auto parsed = number<std::uint16_t>(field.substr(9), 16);
  return parsed && *parsed == port;
}

}  // namespace

std::optional<std::uint64_t> loopback_socket_inode(std::string_view table, std::uint16_t local_port,
                                                   std::uint16_t remote_port) {
  while (!table.empty()) {
    auto end = table.find('\n');
    auto line = table.substr(0, end);
    table = end == std::string_view::npos ? std::string_view{} : table.substr(end + 1);
    auto fields = fields_of(line);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (fields.size() < 10 || !is_loopback_endpoint(fields[1], local_port) ||
        !is_loopback_endpoint(fields[2], remote_port))
      continue;
    auto inode = number<std::uint64_t>(fields[9], 10);
    if (inode && *inode != 0) return inode;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> socket_inode_of_link(std::string_view target) {
  constexpr std::string_view prefix = "socket:[";
  if (!target.starts_with(prefix) || !target.ends_with(']')) return std::nullopt;
  return number<std::uint64_t>(target.substr(prefix.size(), target.size() - prefix.size() - 1), 10);
}

}  // namespace zkverify
