#pragma once
// A secret's file for a test (credentials, a password): CONTENT with MODE, in a fresh temporary
// directory removed with it.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace zkverify::testing {

class TempFile {
 public:
  TempFile(const std::string& content, mode_t mode) {
    auto pattern = (std::filesystem::temp_directory_path() / "zkverify-secret-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    path_ = dir_ + "/secret";
    std::ofstream(path_) << content;
    chmod(path_.c_str(), mode);
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

}  // namespace zkverify::testing
