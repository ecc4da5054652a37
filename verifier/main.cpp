// zkverify's entry point: the command line with the C client's sessions and the process's streams.

#include <iostream>

#include "probes/c_keeper.hpp"
#include "verifier/commands/command.hpp"

int main(int argc, char** argv) {
  zkverify::verifier::Context context{zkverify::probes::c_keeper_factory(), std::cout, std::cerr};
  return zkverify::verifier::run_command_line(argc, argv, context);
}
