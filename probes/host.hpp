#pragma once
// This machine, as zkverify names what it writes.

#include "probes/io.hpp"
#include <string>

namespace zkverify::probes {

// This machine's host name (in a StatefulSet pod: the pod's name).
std::string local_host_name();

}  // namespace zkverify::probes
