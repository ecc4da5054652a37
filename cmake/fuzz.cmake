# libFuzzer targets (issue 13): -DZKVERIFY_FUZZ=ON with clang (Debian's clang-14 and libfuzzer-14-dev).
# Each tests/fuzz/fuzz_<reader>.cpp becomes an executable fuzz_<reader>, built with
# -fsanitize=fuzzer,address,undefined and linked against the pure model (model/), whose libraries are then compiled with
# coverage (fuzzer-no-link) and the same sanitizers. scripts/fuzz.sh builds and runs them all.
option(ZKVERIFY_FUZZ "Build the libFuzzer targets (fuzz_*); needs clang" OFF)

if(ZKVERIFY_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ZKVERIFY_FUZZ=ON needs clang (libFuzzer is clang's): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14; this is ${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER})")
  endif()
  set(ZKVERIFY_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  # The readers under test: coverage for libFuzzer's guidance, and the sanitizers that make a bug a crash.
  foreach(library zkverify_facts zkverify_parse zkverify_books zkverify_judge zkverify_render)
    target_compile_options(${library} PRIVATE -fsanitize=fuzzer-no-link ${ZKVERIFY_FUZZ_SANITIZERS})
    target_link_options(${library} INTERFACE -fsanitize=address,undefined)
  endforeach()

  set(ZKVERIFY_FUZZ_TARGETS srvr mntr conf isro admin_json server_list duration ledger sidecar_request credentials
    zoo_cfg)
  foreach(reader ${ZKVERIFY_FUZZ_TARGETS})
    add_executable(fuzz_${reader} tests/fuzz/fuzz_${reader}.cpp)
    target_compile_options(fuzz_${reader} PRIVATE -fsanitize=fuzzer ${ZKVERIFY_FUZZ_SANITIZERS})
    target_link_options(fuzz_${reader} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${reader} PRIVATE zkverify_model)
    list(APPEND ZKVERIFY_FUZZ_EXECUTABLES fuzz_${reader})
  endforeach()
  # The PEM files TlsClient reads: OpenSSL's parsers behind zkverify's checks (probes/, not instrumented
  # for coverage: the inputs' shapes come from the seeds).
  add_executable(fuzz_tls_files tests/fuzz/fuzz_tls_files.cpp)
  target_compile_options(fuzz_tls_files PRIVATE -fsanitize=fuzzer ${ZKVERIFY_FUZZ_SANITIZERS})
  target_link_options(fuzz_tls_files PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_tls_files PRIVATE zkverify_probes)
  target_compile_definitions(fuzz_tls_files PRIVATE ZKVERIFY_TLS_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/tests/data/tls")
  list(APPEND ZKVERIFY_FUZZ_EXECUTABLES fuzz_tls_files)
  # `cmake --build DIR --target fuzz`: every fuzz target and nothing else.
  add_custom_target(fuzz DEPENDS ${ZKVERIFY_FUZZ_EXECUTABLES})
endif()
