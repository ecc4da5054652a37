#include "verifier/store/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace zkverify::verifier {

namespace fs = std::filesystem;

namespace {

std::string os_error() { return std::strerror(errno); }

void write_all(int fd, const std::string& bytes, const fs::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Failure::state_unwritable, fmt::format("writing {}: {}", path.string(), os_error()));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

StateFile::StateFile(fs::path path, std::chrono::milliseconds wait) : path_(std::move(path)) {
  auto lock_path = path_.string() + ".lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error(Failure::state_unreadable, fmt::format("state file {}: cannot open its lock {}: {}", path_.string(), lock_path, os_error()));
  auto give_up = std::chrono::steady_clock::now() + wait;
  while (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= give_up) {
      ::close(lock_fd_);
      throw Error(Failure::state_unreadable, fmt::format("state file {} is locked by another zkverify (lock {}); try again when it is done",
                                       path_.string(), lock_path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

std::optional<nlohmann::json> StateFile::read() const {
  std::error_code ec;
  if (!fs::exists(path_, ec)) return std::nullopt;
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error(Failure::state_unreadable, fmt::format("state file {}: cannot be read: {}", path_.string(), os_error()));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& error) {
    throw Error(Failure::state_unreadable, fmt::format("state file {} is not valid JSON ({}); fix it, or start over with --reset-state",
                                     path_.string(), error.what()));
  }
}

void StateFile::write(const nlohmann::json& content) const {
  auto dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  auto temp = dir / fmt::format(".{}.tmp.{}", path_.filename().string(), ::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(Failure::state_unwritable, fmt::format("state file {}: cannot create {}: {}", path_.string(), temp.string(), os_error()));
  try {
    write_all(fd, content.dump(2) + "\n", temp);
    if (::fsync(fd) != 0) throw Error(Failure::state_unwritable, fmt::format("fsync {}: {}", temp.string(), os_error()));
    ::close(fd);
    fd = -1;
    if (::rename(temp.c_str(), path_.c_str()) != 0)
      throw Error(Failure::state_unwritable, fmt::format("rename {} to {}: {}", temp.string(), path_.string(), os_error()));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  // The rename is durable only once the directory entry is on disk.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace zkverify::verifier
