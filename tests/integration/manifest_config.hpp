#pragma once
// A manifest's zkverify configuration, as deploy/kubernetes/ ships it, run on this host's lab: what
// an operator applies is what the tests run.

#include <string>
#include <utility>
#include <vector>

#include "integration/lab.hpp"

namespace lab {

struct ManifestConfig {
  std::string manifest;  // under deploy/kubernetes/, e.g. "tls/zkverify-config.yaml"
  // `key = ...` lines of its ConfigMap's zkverify.toml set to these values (e.g. servers).
  std::vector<std::pair<std::string, std::string>> keys;
  // Paths in it (the Secret's mounts under /etc/zkverify) replaced by the lab's files; none may be left.
  std::vector<std::pair<std::string, std::string>> paths;
  bool smoke = false;  // run smoke too ("smoke passed", or its failed cases)
};

// Writes that configuration (listen on a free loopback port), then prints quorum's first line,
// smoke's outcome when asked, and "serve ready" once `serve --local pzoo-1` answers /readyz 200
// (at most 40 s; its log otherwise). The sidecar is stopped and the files removed at the end.
Run run_manifest_config(const ManifestConfig& config);

}  // namespace lab
