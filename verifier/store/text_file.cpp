#include "verifier/store/text_file.hpp"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "model/facts/failure.hpp"

namespace zkverify::verifier {

std::string read_text_file(std::string_view flag, const std::filesystem::path& path, std::uintmax_t max_size,
                           std::string_view what) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  if (error) throw BadInput(fmt::format("{}: cannot read '{}': {}", flag, path.string(), error.message()));
  if (size > max_size) throw BadInput(fmt::format("{}: '{}' is {} bytes: not {}", flag, path.string(), size, what));
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    throw BadInput(
        fmt::format("{}: cannot read '{}': {}", flag, path.string(), std::generic_category().message(errno)));
  return text;
}

}  // namespace zkverify::verifier
