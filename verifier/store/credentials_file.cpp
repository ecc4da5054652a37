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

// Which file: "auth file" and where it comes from, for the messages.
struct Naming {
  const char* what;
  const char* given_by;
};
constexpr Naming auth_file{"auth file", "--auth-file or ZKVERIFY_AUTH_FILE"};
constexpr Naming password_file{"SASL password file", "--sasl-password-file or ZKVERIFY_SASL_PASSWORD_FILE"};

[[noreturn]] void fail(Naming name, const std::string& path, const std::string& why) {
  throw_usage(fmt::format("{} '{}' ({}): {}", name.what, path, name.given_by, why));
}

std::string read_all(const Descriptor& file, Naming name, const std::string& path, off_t size) {
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    auto got = ::read(file.get(), text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(name, path, fmt::format("cannot read it: {}", std::generic_category().message(errno)));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return text;
}

// The file's text, checked as a secret's file must be (regular, small; a warning when others may read it).
std::string read_secret_file(Naming name, const std::string& path, std::ostream& err) {
  if (path.empty()) fail(name, path, "the path is empty");
  // Symbolic links are followed: Kubernetes mounts secrets through them.
  Descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (file.get() < 0) fail(name, path, fmt::format("cannot open it: {}", std::generic_category().message(errno)));
  struct stat status {};
  if (::fstat(file.get(), &status) != 0)
    fail(name, path, fmt::format("cannot stat it: {}", std::generic_category().message(errno)));
  if (!S_ISREG(status.st_mode)) fail(name, path, "is not a regular file");
  if (status.st_size > kMaxCredentialsSize)
    fail(name, path, fmt::format("is larger than {} bytes: not a credentials file", kMaxCredentialsSize));
  if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0)  // ssh refuses such a key; a warning is enough here
    err << fmt::format(
        "zkverify: warning: permissions {:04o} for {} '{}' are too open (group or others may read it): chmod 600 "
        "it\n",
        status.st_mode & 07777, name.what, path);
  return read_all(file, name, path, status.st_size);
}

}  // namespace

Credentials read_credentials_file(const std::string& path, std::ostream& err) {
  auto text = read_secret_file(auth_file, path, err);
  try {
    return parse_credentials(text);
  } catch (const BadInput& bad) {
    fail(auth_file, path, bad.what());
  }
}

std::string read_password_file(const std::string& path, std::ostream& err) {
  auto text = read_secret_file(password_file, path, err);
  try {
    return parse_password(text);
  } catch (const BadInput& bad) {
    fail(password_file, path, bad.what());
  }
}

}  // namespace zkverify::verifier
