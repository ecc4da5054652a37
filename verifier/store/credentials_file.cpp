#include "verifier/store/credentials_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"

namespace zkverify::verifier {

namespace {

// A line of digest:USER:PASSWORD is short; anything this long is the wrong file.
constexpr off_t kMaxCredentialsSize = 4096;

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw_usage(fmt::format("auth file '{}' (--auth-file or ZKVERIFY_AUTH_FILE): {}", path, why));
}

std::string read_all(const Descriptor& file, const std::string& path, off_t size) {
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    auto got = ::read(file.get(), text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(path, fmt::format("cannot read it: {}", std::generic_category().message(errno)));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return text;
}

}  // namespace

Credentials read_credentials_file(const std::string& path, std::ostream& err) {
  if (path.empty()) fail(path, "the path is empty");
  // Symbolic links are followed: Kubernetes mounts secrets through them.
  Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (file.get() < 0) fail(path, fmt::format("cannot open it: {}", std::generic_category().message(errno)));
  struct stat status {};
  if (::fstat(file.get(), &status) != 0)
    fail(path, fmt::format("cannot stat it: {}", std::generic_category().message(errno)));
  if (!S_ISREG(status.st_mode)) fail(path, "is not a regular file");
  if (status.st_size > kMaxCredentialsSize)
    fail(path, fmt::format("is larger than {} bytes: not a credentials file", kMaxCredentialsSize));
  if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0)  // ssh refuses such a key; a warning is enough here
    err << fmt::format(
        "zkverify: warning: permissions {:04o} for auth file '{}' are too open (group or others may "
        "read it): chmod 600 it\n",
        status.st_mode & 07777, path);
  try {
    return parse_credentials(read_all(file, path, status.st_size));
  } catch (const BadInput& bad) {
    fail(path, bad.what());
  }
}

}  // namespace zkverify::verifier
