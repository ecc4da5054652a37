#include <grp.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/facts/failure.hpp"
#include "verifier/store/state_file.hpp"

using namespace zkverify;
using namespace zkverify::verifier;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Matches a zkverify::Error of one Failure.
class FailureIs : public Catch::MatcherBase<zkverify::Error> {
 public:
  explicit FailureIs(zkverify::Failure failure) : failure_(failure) {}
  bool match(const zkverify::Error& error) const override { return error.code() == failure_; }
  std::string describe() const override {
    return "is a zkverify::Error of " + std::string(zkverify::to_string(failure_));
  }

 private:
  zkverify::Failure failure_;
};

struct Dir {
  fs::path path = fs::temp_directory_path() / ("zkverify-unit-" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

// A directory that an unprivileged child can reach: under /tmp, since TMPDIR may be private (0700).
struct SharedDir {
  fs::path path;
  SharedDir() {
    std::string pattern = "/tmp/zkverify-unit-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()));
    path = pattern;
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  }
  ~SharedDir() {
    std::error_code ignored;  // a destructor must not throw, also when a test left a directory closed
    fs::remove_all(path, ignored);
  }
};

// Runs `body` in a forked child whose files may not grow past `bytes` (RLIMIT_FSIZE, SIGXFSZ
// ignored: the write fails with EFBIG) and returns its exit code; `body` answers with its code.
int limited_file_size(rlim_t bytes, const std::function<int()>& body) {
  auto child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{bytes, bytes};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(91);
    try {
      ::_exit(body());
    } catch (...) {
      ::_exit(92);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs `body` in a forked child without root's privileges and returns its exit code. Root bypasses
// permission bits, so when the tests run as root the child becomes nobody; otherwise it is the
// user, whom the bits already bind. `body` must not use Catch's assertions (they belong to the
// parent): it answers with its exit code.
int unprivileged(const std::function<int()>& body) {
  auto* nobody = ::getpwnam("nobody");
  REQUIRE(nobody);
  auto child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0))
      ::_exit(90);
    try {
      ::_exit(body());
    } catch (...) {
      ::_exit(91);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool has_temp_file(const fs::path& dir) {
  return std::ranges::any_of(fs::directory_iterator(dir), [](const fs::directory_entry& entry) {
    return entry.path().filename().string().find(".tmp.") != std::string::npos;
  });
}

// A tmpfs of `size` mounted on a fresh directory, unmounted whatever happens.
class SmallDisk {
 public:
  explicit SmallDisk(const std::string& size) {
    mounted_ = ::mount("tmpfs", dir_.path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_ && ::umount(dir_.path.c_str()) != 0) ::umount2(dir_.path.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  [[nodiscard]] bool mounted() const { return mounted_; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const fs::path& path() const { return dir_.path; }

 private:
  SharedDir dir_;
  bool mounted_ = false;
  std::string error_;  // why it could not be mounted
};

// Writes zeros to `path` until the file system is full.
void fill(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  std::string block(4096, '\0');
  while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
  }
}

}  // namespace

TEST_CASE("state file: missing is a first run, written whole, read back") {
  Dir dir;
  auto file = dir.path / "ledger.json";
  StateFile state(file, std::chrono::milliseconds(100));
  CHECK_FALSE(state.read());
  state.write(nlohmann::json{{"a", 1}});
  CHECK(state.read() == nlohmann::json{{"a", 1}});
  state.write(nlohmann::json{{"a", 2}});
  CHECK((*state.read())["a"] == 2);
  std::size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    ++entries;
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
  CHECK(entries == 2);  // the file and its lock
}

TEST_CASE("state file: corrupt JSON names the path, a second holder is refused") {
  Dir dir;
  auto file = dir.path / "ledger.json";
  std::ofstream(file) << "{ half";
  StateFile state(file, std::chrono::milliseconds(100));
  CHECK_THROWS_MATCHES(state.read(), zkverify::Error, FailureIs(zkverify::Failure::state_unreadable));
  CHECK_THROWS_WITH(state.read(), Contains(file.string()) && Contains("not valid JSON"));
  CHECK_THROWS_WITH(StateFile(file, std::chrono::milliseconds(100)), Contains("locked by another zkverify"));
}

TEST_CASE("state file: a failed write leaves the old file and no temp file") {
  Dir dir;
  SECTION("the rename fails (onto a directory)") {
    fs::create_directory(dir.path / "blocker");
    StateFile into_dir(dir.path / "blocker", std::chrono::milliseconds(100));
    CHECK_THROWS_MATCHES(into_dir.write(nlohmann::json{{"b", 1}}), zkverify::Error,
                         FailureIs(zkverify::Failure::state_unwritable));
    CHECK(fs::is_directory(dir.path / "blocker"));
    CHECK_FALSE(has_temp_file(dir.path));
  }
  SECTION("the ledger's own write fails half-way: its bytes are unchanged") {
    auto file = dir.path / "ledger.json";
    {
      StateFile state(file, std::chrono::milliseconds(100));
      state.write(nlohmann::json{{"a", 1}, {"pad", std::string(100, 'o')}});
    }
    auto old_bytes = bytes_of(file);
    // A child whose files may not grow past 64 bytes (RLIMIT_FSIZE, which binds root too): every
    // write of the ledger fails with EFBIG after the first 64 bytes. 0 when it threw
    // state_unwritable naming EFBIG, 1 when the write "succeeded", 2 when it threw something else.
    auto child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      struct rlimit small {
        64, 64
      };
      if (::setrlimit(RLIMIT_FSIZE, &small) != 0) ::_exit(90);
      try {
        StateFile state(file, std::chrono::milliseconds(100));
        state.write(nlohmann::json{{"a", 2}, {"pad", std::string(1000, 'n')}});
        ::_exit(1);
      } catch (const zkverify::Error& error) {
        bool efbig = std::string(error.what()).find(std::strerror(EFBIG)) != std::string::npos;
        ::_exit(error.code() == zkverify::Failure::state_unwritable && efbig ? 0 : 2);
      } catch (...) {
        ::_exit(3);
      }
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(bytes_of(file) == old_bytes);  // the old ledger stands, byte for byte
    CHECK_FALSE(has_temp_file(dir.path));
    StateFile state(file, std::chrono::milliseconds(100));
    CHECK((*state.read())["a"] == 1);
  }
}

TEST_CASE("state file: a symlink planted at the temp file's name is not followed") {
  Dir dir;
  auto file = dir.path / "ledger.json";
  auto victim = dir.path / "victim";
  std::ofstream(victim) << "precious";
  // The name the temp file had before it was random: anyone could plant a link there in advance.
  fs::create_symlink(victim, dir.path / (".ledger.json.tmp." + std::to_string(::getpid())));
  StateFile state(file, std::chrono::milliseconds(100));
  state.write(nlohmann::json{{"a", 1}});
  CHECK(bytes_of(victim) == "precious");
  CHECK_FALSE(fs::is_symlink(file));
  CHECK(state.read() == nlohmann::json{{"a", 1}});
}

TEST_CASE("state file: the replacement keeps the old file's mode, group and owner") {
  Dir dir;
  auto file = dir.path / "ledger.json";
  StateFile state(file, std::chrono::milliseconds(100));
  state.write(nlohmann::json{{"a", 1}});
  if (::geteuid() == 0) {  // a ledger a colleague wrote, shared with a group
    auto* nobody = ::getpwnam("nobody");
    REQUIRE(nobody);
    REQUIRE(::chown(file.c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  }
  REQUIRE(::chmod(file.c_str(), 0660) == 0);
  struct stat before {};
  REQUIRE(::stat(file.c_str(), &before) == 0);
  state.write(nlohmann::json{{"a", 2}});
  struct stat after {};
  REQUIRE(::stat(file.c_str(), &after) == 0);
  CHECK((after.st_mode & 07777) == 0660);
  CHECK(after.st_gid == before.st_gid);
  CHECK(after.st_uid == before.st_uid);
  CHECK(after.st_ino != before.st_ino);  // replaced, not rewritten in place
}

TEST_CASE("state file: a user who may not write the lock file still takes it and reads") {
  SharedDir dir;
  auto file = dir.path / "ledger.json";
  {
    StateFile state(file, std::chrono::milliseconds(100));
    state.write(nlohmann::json{{"a", 1}});
  }
  REQUIRE(::chmod((file.string() + ".lock").c_str(), 0444) == 0);
  auto code = unprivileged([&] {
    StateFile state(file, std::chrono::milliseconds(100));
    return state.read() == nlohmann::json{{"a", 1}} ? 0 : 1;
  });
  CHECK(code == 0);  // 91: it threw (the lock could not be opened)
}

TEST_CASE("state file: a ledger that cannot be looked at is unreadable, not a first run") {
  // 0 when read() threw state_unreadable naming the file; 1 when it answered (as if a first run).
  auto read_outcome = [](const fs::path& file) {
    StateFile state(file, std::chrono::milliseconds(100));
    try {
      static_cast<void>(state.read());
    } catch (const zkverify::Error& error) {
      bool named = std::string(error.what()).find(file.string()) != std::string::npos;
      return error.code() == zkverify::Failure::state_unreadable && named ? 0 : 2;
    }
    return 1;
  };
  SECTION("a symlink loop (ELOOP)") {
    Dir dir;
    auto file = dir.path / "ledger.json";
    fs::create_symlink(file, file);
    CHECK(read_outcome(file) == 0);
  }
  SECTION("a directory this user may not search (EACCES)") {
    SharedDir dir;
    auto secret = dir.path / "secret";
    fs::create_directory(secret);
    std::ofstream(secret / "ledger.json") << R"({"a": 1})";
    auto file = dir.path / "ledger.json";
    fs::create_symlink(secret / "ledger.json", file);
    { StateFile creates_the_lock(file, std::chrono::milliseconds(100)); }
    REQUIRE(::chmod(secret.c_str(), 0) == 0);
    REQUIRE(::chmod((file.string() + ".lock").c_str(), 0666) == 0);  // so that only the ledger is out of reach
    auto code = unprivileged([&] { return read_outcome(file); });
    REQUIRE(::chmod(secret.c_str(), 0700) == 0);
    CHECK(code == 0);
  }
}

TEST_CASE("state file: a full disk is unwritable and the old ledger stands") {
  SmallDisk disk("64k");
  if (!disk.mounted()) {
    // Not root: the same promise under a file-size limit (EFBIG where a full disk says ENOSPC).
    WARN("cannot mount a tmpfs (" << disk.error() << "): a file-size limit stands in for the full disk");
    Dir dir;
    auto file = dir.path / "ledger.json";
    { StateFile(file, std::chrono::milliseconds(100)).write(nlohmann::json{{"a", 1}}); }
    auto old_bytes = bytes_of(file);
    auto code = limited_file_size(16384, [&] {
      nlohmann::json big;
      big["pad"] = std::string(32768, 'x');
      try {
        StateFile(file, std::chrono::milliseconds(100)).write(big);
      } catch (const zkverify::Error& error) {
        return error.code() == zkverify::Failure::state_unwritable ? 0 : 2;
      }
      return 1;
    });
    CHECK(code == 0);
    CHECK(bytes_of(file) == old_bytes);
    CHECK_FALSE(has_temp_file(dir.path));
    return;
  }
  auto file = disk.path() / "ledger.json";
  StateFile state(file, std::chrono::milliseconds(100));
  state.write(nlohmann::json{{"a", 1}});
  auto old_bytes = bytes_of(file);
  fill(disk.path() / "filler");
  nlohmann::json big;
  big["pad"] = std::string(32768, 'x');
  CHECK_THROWS_MATCHES(state.write(big), zkverify::Error, FailureIs(zkverify::Failure::state_unwritable));
  CHECK_THROWS_WITH(state.write(big), Contains(std::strerror(ENOSPC)));  // the disk, not something else
  CHECK(bytes_of(file) == old_bytes);
  CHECK_FALSE(has_temp_file(disk.path()));
}
