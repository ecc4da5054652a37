// Prints docs/findings.md from the findings table: scripts/gen-docs.sh writes it there.
#include <iostream>

#include "model/render/findings_reference.hpp"

int main() {
  std::cout << zkverify::findings_reference_markdown();
  return 0;
}
