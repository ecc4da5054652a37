#pragma once
// The ledger's file: read it (a missing file is a first run; a file that cannot be looked at is not),
// write it atomically (a temp file created exclusively under a random name, fsync, rename, fsync of
// the directory) keeping the old file's mode, group and, when allowed, owner, and hold an exclusive
// lock (flock on FILE.lock, opened read-only by a user who may not write it) meanwhile.

#include <chrono>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "model/facts/errors.hpp"
#include "model/facts/failure.hpp"

namespace zkverify::verifier {

// Errors name the path and why: zkverify::Error with Failure::state_unreadable (unreadable, corrupt,
// locked) or Failure::state_unwritable (the write failed; the previous file stands).
class StateFile {
 public:
  // Takes the lock, waiting up to `wait` for another zkverify to release it. A user who may only read
  // the ledger takes it too (and a write then fails).
  StateFile(std::filesystem::path path, std::chrono::milliseconds wait);
  ~StateFile();  // releases the lock
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  // The file's JSON, or nullopt when there is no file yet.
  std::optional<nlohmann::json> read() const;
  // Replaces the file in one step: a reader sees the old content or the new, never a mix.
  void write(const nlohmann::json& content) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
};

// Replaces `path` with `bytes` in one step, as StateFile::write does (an exclusive temp beside it,
// fsync, rename, fsync of the directory; a replaced file keeps its access), without the lock. Throws
// zkverify::Error(Failure::state_unwritable) naming the path; the previous file, if any, stands.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace zkverify::verifier
