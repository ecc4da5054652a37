// The process's output (verifier/check/output.hpp): whole lines, in the order handed over, from the
// command's streams and from other threads' say(); nothing written after the finish.

#include <catch2/catch.hpp>

#include <sstream>

#include "test_executor.hpp"
#include "verifier/check/output.hpp"

using zkverify::Clock;
using zkverify::verifier::Channel;
using zkverify::verifier::Output;
using namespace std::chrono_literals;

TEST_CASE("output: a line the command is writing is not split by text said meanwhile", "[output]") {
  std::ostringstream out, err;
  Output output(test_executor(), out, err);
  output.out() << "step pzoo-0: ";
  output.say(Channel::out, "12:00:01 pzoo-0 disconnected\n");  // a watch's event, while the line is half-written
  output.out() << "done" << '\n' << 42;                        // the number: a partial line, out at the flush
  output.err() << "zkverify: waiting\n";
  REQUIRE(output.written(Clock::now() + 5s));
  CHECK(out.str() == "12:00:01 pzoo-0 disconnected\nstep pzoo-0: done\n42");
  CHECK(err.str() == "zkverify: waiting\n");

  output.out() << "the summary\n";
  REQUIRE(output.finish(Clock::now() + 5s));
  output.say(Channel::out, "an event after the end\n");  // dropped: the streams given may be gone
  output.out() << "late\n";
  REQUIRE(output.written(Clock::now() + 5s));  // answered once the late text's turn has passed
  CHECK(out.str() == "12:00:01 pzoo-0 disconnected\nstep pzoo-0: done\n42the summary\n");
}
