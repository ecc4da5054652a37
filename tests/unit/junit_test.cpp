// The JUnit renderer: escaping (markup, control characters, invalid UTF-8), the document's shape,
// and validity against the junit-10 schema the project keeps (checked by xmllint, a real consumer).

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/render/junit.hpp"

using namespace zkverify;
using Catch::Matchers::Contains;

namespace {

JUnitSuite sample_suite() {
  CaseResult ok{"round-trip", CaseOutcome::passed, "read back on 5/5", "", {}, "", 0.052};
  CaseResult bad{"server-serving/zoo-1",
                 CaseOutcome::failed,
                 "zoo-1 is <unreachable> & \"gone\"",
                 "connect via zoo-1: connection_loss\n",
                 {},
                 "",
                 0.0};
  CaseResult latency{"latency/zoo-1",
                     CaseOutcome::passed,
                     "10 operations",
                     "",
                     {{"create.p50_ms", "1.200"}, {"create.p99_ms", "3.400"}},
                     "create n=10 p50=1.200ms\n",
                     0.31};
  CaseResult skipped{"watch-fires", CaseOutcome::skipped, "not run: stopped", "", {}, "", 0};
  return {"zkverify smoke", "zkverify.smoke", "2026-12-01T01:02:03Z", "ci-runner", 1.234, {ok, bad, latency, skipped}};
}

// xmllint's exit code validating `xml` against the kept schema (0: valid).
int validate(const std::string& xml) {
  auto file = std::filesystem::temp_directory_path() / ("zkverify-junit-test-" + std::to_string(::getpid()) + ".xml");
  std::ofstream(file) << xml;
  auto command = "xmllint --noout --schema " ZKVERIFY_TEST_DATA "/junit/junit-10.xsd " + file.string() + " 2>/dev/null";
  int status = std::system(command.c_str());
  std::filesystem::remove(file);
  return status;
}

}  // namespace

TEST_CASE("junit: markup, quotes and line breaks are escaped, text stays text", "[smoke]") {
  CHECK(xml_escape("a<b>&c") == "a&lt;b&gt;&amp;c");
  CHECK(xml_escape("say \"hi\"\n", true) == "say &quot;hi&quot;&#10;");
  CHECK(xml_escape("say \"hi\"\n") == "say \"hi\"\n");
  CHECK(xml_escape("tab\there", true) == "tab&#9;here");
  CHECK(xml_escape("cr\r") == "cr&#13;");
}

TEST_CASE("junit: invalid UTF-8 and characters XML forbids become U+FFFD, valid UTF-8 is kept", "[smoke]") {
  const std::string replacement = "\xEF\xBF\xBD";
  CHECK(xml_escape("caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x90\x98") == "caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x90\x98");
  CHECK(xml_escape(std::string("nul\0!", 5)) == "nul" + replacement + "!");
  CHECK(xml_escape("bell\x07") == "bell" + replacement);
  CHECK(xml_escape("bad \xFF byte") == "bad " + replacement + " byte");
  CHECK(xml_escape("cut \xE2\x9C") == "cut " + replacement + replacement);
  CHECK(xml_escape("overlong \xC0\xAF") == "overlong " + replacement + replacement);
  CHECK(xml_escape("surrogate \xED\xA0\x80") == "surrogate " + replacement + replacement + replacement);
  CHECK(xml_escape("nonchar \xEF\xBF\xBF") == "nonchar " + replacement);
}

TEST_CASE("junit: testsuites > testsuite > testcase with the counts, failures and figures", "[smoke]") {
  auto xml = render_junit(sample_suite());
  CHECK_THAT(xml, Contains("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  CHECK_THAT(xml,
             Contains("<testsuites name=\"zkverify smoke\" tests=\"4\" failures=\"1\" errors=\"0\" time=\"1.234\">"));
  CHECK_THAT(xml, Contains("<testsuite name=\"zkverify smoke\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\" "
                           "time=\"1.234\" timestamp=\"2026-12-01T01:02:03Z\" hostname=\"ci-runner\">"));
  CHECK_THAT(xml, Contains("<testcase classname=\"zkverify.smoke\" name=\"round-trip\" time=\"0.052\">"));
  CHECK_THAT(xml, Contains("<failure message=\"zoo-1 is &lt;unreachable&gt; &amp; &quot;gone&quot;\" type=\"failure\">"
                           "connect via zoo-1: connection_loss\n</failure>"));
  CHECK_THAT(xml, Contains("<skipped message=\"not run: stopped\"/>"));
  CHECK_THAT(xml, Contains("<property name=\"latency/zoo-1/create.p99_ms\" value=\"3.400\"/>"));
  CHECK_THAT(xml, Contains("<system-out>create n=10 p50=1.200ms\n</system-out>"));
  CHECK_THAT(xml, Contains("<system-out>read back on 5/5</system-out>"));
}

TEST_CASE("junit: the document validates against the junit-10 schema, also with hostile text", "[smoke]") {
  auto suite = sample_suite();
  CHECK(validate(render_junit(suite)) == 0);
  const char hostile[] = "bytes \xFF\x01\0 ]]> <!-- -->";
  suite.cases[1].message = std::string(hostile, sizeof hostile - 1);
  suite.cases[1].detail = "</failure><evil/>";
  suite.hostname = "h\"ost";
  CHECK(validate(render_junit(suite)) == 0);
  suite.cases.clear();
  CHECK(validate(render_junit(suite)) == 0);
  // The check can fail: a document the schema refuses.
  CHECK(validate("<testsuites><testsuite/></testsuites>") != 0);
}
