#pragma once
// JUnit XML for CI (Jenkins' xunit junit-10 schema, GitLab's artifacts:reports:junit, GitHub's
// JUnit report actions): testsuites > testsuite > testcase. Pure: text in, text out. Any bytes
// become well-formed XML: markup is escaped, invalid UTF-8 and characters XML 1.0 forbids become
// U+FFFD.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/judge/smoke_judge.hpp"

namespace zkverify {

struct JUnitSuite {
  std::string name;       // the suite's name, e.g. "zkverify smoke"
  std::string classname;  // every testcase's classname, e.g. "zkverify.smoke"
  std::string timestamp;  // ISO 8601, when the run started
  std::string hostname;
  double seconds = 0;
  std::vector<CaseResult> cases;
};

// The whole document, UTF-8, with the XML declaration. A case's properties go to the suite's
// <properties> named "<case id>/<name>" (junit-10 allows properties on suites only); its figures,
// or its message when it has none, to its <system-out>.
std::string render_junit(const JUnitSuite& suite);

// `text` as XML character data (attribute: also quotes and line breaks as references).
std::string xml_escape(std::string_view text, bool attribute = false);

}  // namespace zkverify
