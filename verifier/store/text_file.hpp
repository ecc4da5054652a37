#pragma once
// Reading a small text file that the user names (a configuration of ours or of ZooKeeper's).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace zkverify::verifier {

// The whole of `path`; throws BadInput "FLAG: cannot read 'PATH': why" when it cannot be read, or
// "FLAG: 'PATH' is N bytes: not WHAT" when it is larger than `max_size` (the wrong file).
std::string read_text_file(std::string_view flag, const std::filesystem::path& path, std::uintmax_t max_size,
                           std::string_view what);

}  // namespace zkverify::verifier
