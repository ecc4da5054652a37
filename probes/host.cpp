#include "probes/host.hpp"

#include <unistd.h>

namespace zkverify::probes {

std::string local_host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace zkverify::probes
