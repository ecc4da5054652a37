#pragma once
// The sidecar's pages for people and for the kubelet: the HTML status page (self-contained, no
// external assets, every value escaped) and the /readyz body (kube-apiserver style with ?verbose).

#include <chrono>
#include <string>

#include "model/judge/readiness.hpp"
#include "model/judge/sidecar_status.hpp"
#include "model/render/html_text.hpp"

namespace zkverify {

// The whole page: the server table as `quorum` prints it, the findings, the local readiness and
// when it was checked (`now` gives the age).
std::string render_status_page(const SidecarStatus& status, std::chrono::system_clock::time_point now);

// /readyz: "ok" or "not ready: <first failure>"; verbose: one "[+]name ok" or "[-]name failed:
// reason" line per check, then "readyz check passed|failed". `readiness` null: before the first
// cycle. `fresh` false: the last cycle is too old to stand for now (a "[-]cycle" check fails).
std::string render_readyz(const Readiness* readiness, bool verbose, bool fresh = true);

}  // namespace zkverify
