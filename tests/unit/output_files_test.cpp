// smoke --junit and roll --report replace their file whole (written beside it, then renamed over
// it): a CI system reading the old report, or a hard link to it, never sees a half-written one, and
// nothing else is left in the directory.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "command_line_fakes.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
using namespace command_line;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A directory holding OUTPUT with old bytes and a hard link to it, as a reader holding the old file
// would see it; removed at the end.
struct OldOutput {
  fs::path dir = fs::temp_directory_path() / ("zkverify-outputs-" + std::to_string(::getpid()));
  fs::path output, link;
  explicit OldOutput(const std::string& name) : output(dir / name), link(dir / "the-old-one") {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(output) << "the old report\n";
    fs::create_hard_link(output, link);
  }
  ~OldOutput() { fs::remove_all(dir); }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
  }
};

}  // namespace

TEST_CASE("smoke --junit replaces the old file whole: its old bytes are never overwritten, no temporary file left") {
  FakeEnsemble ensemble;
  OldOutput old("smoke.xml");
  auto ran = run(ensemble.zookeeper, {"smoke", "--servers", ensemble.servers(), "--junit", old.output.string()});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(read_all(old.link) == "the old report\n");  // an in-place write would have changed these bytes
  auto written = read_all(old.output);
  CHECK_THAT(written, StartsWith("<?xml") && Contains("<testsuites") && Contains("</testsuites>"));
  CHECK(fs::hard_link_count(old.output) == 1);
  CHECK(old.entries() == std::set<std::string>{"smoke.xml", "the-old-one"});
}

TEST_CASE("roll --report replaces the old file whole, also when the roll is refused before its first step") {
  FakeEnsemble ensemble;
  ensemble.srvr_answers(4, {::fake::Behaviour::close_at_once, ""});  // zoo-1 down: refused, degraded
  OldOutput old("roll.html");
  auto state = old.dir / "state.json";
  auto ran = run(ensemble.zookeeper, {"roll", "--servers", ensemble.servers(), "--state", state.string(), "--report",
                                      old.output.string(), "--step-timeout", "5s", "--", "true"});
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 1);
  CHECK_THAT(ran.err, Contains("report written to " + old.output.string()));
  CHECK(read_all(old.link) == "the old report\n");
  CHECK_THAT(read_all(old.output), StartsWith("<!DOCTYPE html>") && Contains("</html>"));
  CHECK(fs::hard_link_count(old.output) == 1);
  auto left = old.entries();
  left.erase("state.json");
  left.erase("state.json.lock");
  CHECK(left == std::set<std::string>{"roll.html", "the-old-one"});
}
