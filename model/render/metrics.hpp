#pragma once
// The sidecar's status in the Prometheus text exposition format 0.0.4: every family prefixed
// zkverify_, with HELP and TYPE, base units (seconds), _total on counters, label values escaped.

#include <string>
#include <string_view>

#include "model/judge/sidecar_status.hpp"

namespace zkverify {

// The whole /metrics body; every series labelled ensemble="NAME" when status.ensemble names it.
std::string render_metrics(const SidecarStatus& status);

// A label value escaped as the format asks: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);

inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace zkverify
