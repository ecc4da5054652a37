#pragma once
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

// Reads a capture from tests/data/ (output of a real ZooKeeper 3.8.0 server, see tests/data/README.md).
inline std::string capture(const std::string& name) {
  std::ifstream in(std::string(ZKVERIFY_TEST_DATA) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing capture " + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
