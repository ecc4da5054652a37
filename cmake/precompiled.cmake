# Precompiled headers: the standard and third-party headers that most of a library's files include,
# parsed once per library instead of once per file. With clang at -O0 (the test command's sanitizer
# builds) that is 40% of a file's compile time (verifier/commands/roll.cpp under ASan: 12.8 s
# without, 8.7 s with; tests/unit/gates_test.cpp 5.5 s and 3.0 s). With GCC at -O3 it is not worth
# it (a Release build took 459 s with them, 434 s without: loading a 200 MB header costs about what
# parsing saves, and each library waits for its own), so they are on for clang only. Every file
# still includes what it uses: a build with -DCMAKE_UNITY_BUILD=OFF (scripts/test.sh's build-clang)
# compiles each file alone, and fails where one misses a header of its own project.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  option(ZKVERIFY_PCH "precompile the standard and third-party headers most files include" ON)
else()
  option(ZKVERIFY_PCH "precompile the standard and third-party headers most files include" OFF)
endif()

# zkverify_precompile(TARGET LAYER): LAYER pure (the model: the standard library, fmt, nlohmann/json),
# io (and the parts of Asio every I/O header includes), cli (and CLI11), tests (and Catch2).
function(zkverify_precompile target layer)
  if(NOT ZKVERIFY_PCH)
    return()
  endif()
  # <utility> first, in place of the -include that Boost 1.74 needs (CMakeLists.txt): a precompiled
  # header is used only when nothing comes before it, else the compiler parses it as text.
  get_target_property(options ${target} COMPILE_OPTIONS)
  if(options)
    list(REMOVE_ITEM options "SHELL:-include utility")
    set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "${options}")
  endif()
  set(headers <utility> <algorithm> <chrono> <cstdint> <functional> <map> <memory> <optional> <set> <string>
              <string_view> <vector> <fmt/format.h> <fmt/ranges.h> <nlohmann/json.hpp>)
  if(layer STREQUAL "io" OR layer STREQUAL "cli" OR layer STREQUAL "tests")
    list(APPEND headers <boost/asio/any_io_executor.hpp> <boost/asio/awaitable.hpp> <boost/asio/io_context.hpp>
         <boost/asio/ip/address.hpp> <boost/asio/post.hpp> <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp>)
  endif()
  if(layer STREQUAL "cli" OR layer STREQUAL "tests")
    list(APPEND headers <CLI/CLI.hpp>)
  endif()
  if(layer STREQUAL "tests")
    list(APPEND headers <catch2/catch.hpp>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
