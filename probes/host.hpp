#pragma once
// This machine, as zkverify names what it writes.

#include <string>
#include "probes/io.hpp"

namespace zkverify::probes {

// This machine's host name (in a StatefulSet pod: the pod's name).
std::string local_host_name();

}  // namespace zkverify::probes
