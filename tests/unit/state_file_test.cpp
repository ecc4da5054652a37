#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "verifier/store/state_file.hpp"

using namespace zkverify::verifier;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Matches a zkverify::Error of one Failure.
class FailureIs : public Catch::MatcherBase<zkverify::Error> {
 public:
  explicit FailureIs(zkverify::Failure failure) : failure_(failure) {}
  bool match(const zkverify::Error& error) const override { return error.code() == failure_; }
  std::string describe() const override { return "is a zkverify::Error of " + std::string(zkverify::to_string(failure_)); }

 private:
  zkverify::Failure failure_;
};

struct Dir {
  fs::path path = fs::temp_directory_path() / ("zkverify-unit-" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

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
  auto file = dir.path / "ledger.json";
  StateFile state(file, std::chrono::milliseconds(100));
  state.write(nlohmann::json{{"a", 1}});
  fs::create_directory(dir.path / "blocker");
  StateFile into_dir(dir.path / "blocker", std::chrono::milliseconds(100));  // rename onto a directory fails
  CHECK_THROWS_MATCHES(into_dir.write(nlohmann::json{{"b", 1}}), zkverify::Error,
                       FailureIs(zkverify::Failure::state_unwritable));
  CHECK((*state.read())["a"] == 1);
  for (const auto& entry : fs::directory_iterator(dir.path))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}
