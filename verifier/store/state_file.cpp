#include "verifier/store/state_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <random>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace zkverify::verifier {

namespace fs = std::filesystem;

namespace {

std::string os_error() { return std::generic_category().message(errno); }

// A descriptor closed on every path.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  [[nodiscard]] int get() const { return fd_; }
  // Closes now; false when the close reports an error (some file systems report failed writes there).
  bool close() { return ::close(std::exchange(fd_, -1)) == 0; }

 private:
  int fd_;
};

// The lock beside the ledger, read-write (created if missing) when this user may, read-only when it
// may not: flock needs no write access, so a user who may only read the ledger can still wait for
// a writer to finish. Never through a symlink: O_CREAT would create the file it points to.
int open_lock(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0 || (errno != EACCES && errno != EROFS)) return fd;
  int denied = errno;
  fd = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) errno = denied;  // why it could not be written says more than "no such file"
  return fd;
}

std::string read_all(int fd, const fs::path& path) {
  std::string bytes;
  char buffer[16384];
  while (true) {
    auto n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(Failure::state_unreadable,
                  fmt::format("state file {}: cannot be read: {}", path.string(), os_error()));
    if (n == 0) return bytes;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

void write_all(int fd, const std::string& bytes, const fs::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(Failure::state_unwritable, fmt::format("writing {}: {}", path.string(), os_error()));
    done += static_cast<std::size_t>(n);
  }
}

// The file being replaced, if there is one. Only ENOENT means none: any other error (EACCES, ELOOP)
// is a file this user cannot see, which must not be replaced as if it were a first run.
std::optional<struct stat> existing_file(const fs::path& path) {
  struct stat old {};
  if (::stat(path.c_str(), &old) == 0) return old;
  if (errno == ENOENT) return std::nullopt;
  throw Error(Failure::state_unreadable, fmt::format("state file {}: cannot be read: {}", path.string(), os_error()));
}

// A name beside the ledger that nobody can know in advance, to plant something at.
fs::path temp_beside(const fs::path& path, const fs::path& dir) {
  std::random_device random;
  return dir / fmt::format(".{}.tmp.{:08x}{:08x}", path.filename().string(), random(), random());
}

// Created exclusively and never through a symlink (O_EXCL refuses any existing name, O_NOFOLLOW says
// so twice): in a shared directory, nothing planted there may redirect the write. A replacement
// starts private and gets the old file's mode before any byte is written; a first ledger gets 0644
// less the umask.
int create_temp(const fs::path& temp, bool replacing) {
  return ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, replacing ? 0600 : 0644);
}

// The replacement keeps the old file's owner, group and mode, so that a ledger a group shares stays
// theirs whoever ran last. Ownership first: a chown may clear the set-group-ID bit that the chmod
// then restores. It is best effort: only root may give a file away, and a user may give it only a
// group it belongs to; short of that, the replacement has the writer's group.
void keep_access(int fd, const struct stat& old, const fs::path& temp) {
  static_cast<void>(::fchown(fd, old.st_uid, old.st_gid) == 0 || ::fchown(fd, static_cast<uid_t>(-1), old.st_gid) == 0);
  if (::fchmod(fd, old.st_mode & 07777) != 0)
    throw Error(Failure::state_unwritable, fmt::format("chmod {}: {}", temp.string(), os_error()));
}

// The exclusive flock on `fd`, within `wait`. flock has no timeout, so the lock file is watched
// (inotify) before the first try: a holder lets go by closing the file, and that close is the event
// to try again on. Without inotify, one try.
bool lock_within(int fd, const std::string& lock_path, std::chrono::milliseconds wait) {
  UniqueFd closes(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (closes.get() >= 0) ::inotify_add_watch(closes.get(), lock_path.c_str(), IN_CLOSE_WRITE | IN_CLOSE_NOWRITE);
  auto give_up = std::chrono::steady_clock::now() + wait;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (errno != EWOULDBLOCK || left.count() <= 0 || closes.get() < 0) return false;
    pollfd event{closes.get(), POLLIN, 0};
    if (::poll(&event, 1, static_cast<int>(left.count())) > 0) {
      std::array<char, 4096> drained{};
      while (::read(closes.get(), drained.data(), drained.size()) > 0) {
      }
    }
  }
  return true;
}

// Replaces `path` (whose stat is `old`, none for a first write) with `bytes` in one step: an
// exclusive temp beside it, fsync, rename, fsync of the directory. On failure the temp is gone, the
// previous file stands, and the Error names the step that failed.
void replace_file(const fs::path& path, const std::string& bytes, const std::optional<struct stat>& old) {
  auto dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  auto temp = temp_beside(path, dir);
  UniqueFd fd(create_temp(temp, old.has_value()));
  if (fd.get() < 0)
    throw Error(Failure::state_unwritable, fmt::format("cannot create {}: {}", temp.string(), os_error()));
  try {
    if (old) keep_access(fd.get(), *old, temp);
    write_all(fd.get(), bytes, temp);
    if (::fsync(fd.get()) != 0)
      throw Error(Failure::state_unwritable, fmt::format("fsync {}: {}", temp.string(), os_error()));
    if (!fd.close()) throw Error(Failure::state_unwritable, fmt::format("close {}: {}", temp.string(), os_error()));
    if (::rename(temp.c_str(), path.c_str()) != 0)
      throw Error(Failure::state_unwritable,
                  fmt::format("rename {} to {}: {}", temp.string(), path.string(), os_error()));
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  // The rename is durable only once the directory entry is on disk.
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
}

}  // namespace

StateFile::StateFile(fs::path path, std::chrono::milliseconds wait) : path_(std::move(path)) {
  auto lock_path = path_.string() + ".lock";
  lock_fd_ = open_lock(lock_path);
  if (lock_fd_ < 0)
    throw Error(Failure::state_unreadable,
                fmt::format("state file {}: cannot open its lock {}: {}", path_.string(), lock_path, os_error()));
  if (!lock_within(lock_fd_, lock_path, wait)) {
    ::close(lock_fd_);
    throw Error(Failure::state_unreadable,
                fmt::format("state file {} is locked by another zkverify (lock {}); try again when it is done",
                            path_.string(), lock_path));
  }
}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

std::optional<nlohmann::json> StateFile::read() const {
  UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 && errno == ENOENT) return std::nullopt;  // a first run; any other error is not
  if (fd.get() < 0)
    throw Error(Failure::state_unreadable,
                fmt::format("state file {}: cannot be read: {}", path_.string(), os_error()));
  try {
    return nlohmann::json::parse(read_all(fd.get(), path_));
  } catch (const nlohmann::json::parse_error& error) {
    throw Error(Failure::state_unreadable,
                fmt::format("state file {} is not valid JSON ({}); fix it, or start over with --reset-state",
                            path_.string(), error.what()));
  }
}

void StateFile::write(const nlohmann::json& content) const {
  auto old = existing_file(path_);
  try {
    replace_file(path_, content.dump(2) + "\n", old);
  } catch (const Error& error) {  // the temp file's name alone would not tell which ledger failed
    throw Error(Failure::state_unwritable,
                fmt::format("state file {} not written ({}); the previous one stands", path_.string(), error.what()));
  }
}

void write_file_atomically(const fs::path& path, const std::string& bytes) {
  std::optional<struct stat> old;
  try {
    old = existing_file(path);
  } catch (const Error&) {
    throw Error(Failure::state_unwritable, fmt::format("{}: cannot be replaced: {}", path.string(), os_error()));
  }
  try {
    replace_file(path, bytes, old);
  } catch (const Error& error) {
    throw Error(Failure::state_unwritable, fmt::format("{}: {}", path.string(), error.what()));
  }
}

}  // namespace zkverify::verifier
