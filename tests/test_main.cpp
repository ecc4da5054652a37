// The tests' main: Catch2's, ended as zkverify's own main ends (verifier/main.cpp). A session whose
// close was abandoned at its deadline may still be closing on a worker or a C-client thread; static
// destructors (the shared test executor's) would race those threads at exit, so the process ends
// without them, after the leak check an ASan build would have made at exit.

#define CATCH_CONFIG_RUNNER
#include <cstdio>
#include <cstdlib>

#include <catch2/catch.hpp>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZKVERIFY_LEAK_CHECK 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ZKVERIFY_LEAK_CHECK 1
#endif
#ifdef ZKVERIFY_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

int main(int argc, char* argv[]) {
  int result = Catch::Session().run(argc, argv);
  std::fflush(nullptr);
#ifdef ZKVERIFY_LEAK_CHECK
  __lsan_do_leak_check();  // exits non-zero itself when it finds a leak
#endif
  std::_Exit(result);
}
