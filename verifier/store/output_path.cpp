#include "verifier/store/output_path.hpp"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "model/facts/failure.hpp"

namespace zkverify {

void check_output_path(std::string_view flag, const std::string& path, bool read_first) {
  namespace fs = std::filesystem;
  if (path.empty()) throw BadInput(fmt::format("{}: the path is empty", flag));
  std::error_code error;
  auto status = fs::status(path, error);
  if (fs::is_directory(status)) throw BadInput(fmt::format("{} '{}' is a directory: give a file's path", flag, path));
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw BadInput(fmt::format("{} '{}' is not a regular file", flag, path));
  if (read_first && fs::exists(status) && ::access(path.c_str(), R_OK) != 0) return;
  // The file is replaced by a rename from a temporary file beside it: its directory must take one.
  auto directory = fs::path(path).parent_path();
  if (directory.empty()) directory = ".";
  auto unwritable = [&](std::string_view why) {
    return Error(Failure::state_unwritable, fmt::format("{} '{}': cannot be written: {}", flag, path, why));
  };
  if (!fs::is_directory(directory, error)) throw unwritable(fmt::format("no directory {}", directory.string()));
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw unwritable(fmt::format("directory {} is not writable", directory.string()));
}

}  // namespace zkverify
