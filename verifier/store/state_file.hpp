#pragma once
// The ledger's file: read it (a missing file is a first run), write it atomically (temp file, fsync,
// rename, fsync of the directory), and hold an exclusive lock (flock on FILE.lock) meanwhile.

#include <chrono>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "probes/errors.hpp"

namespace zkverify::verifier {

// Errors name the path and why: zkverify::Error with Failure::state_unreadable (unreadable, corrupt,
// locked) or Failure::state_unwritable (the write failed; the previous file stands).
class StateFile {
 public:
  // Takes the lock, waiting up to `wait` for another zkverify to release it.
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

}  // namespace zkverify::verifier
