# auth (issue 13, part 1): sources by library, relative to the top source directory.
set(ZKVERIFY_AUTH_MODEL_SOURCES probes/credentials.cpp)
set(ZKVERIFY_AUTH_PROBES_SOURCES)
set(ZKVERIFY_AUTH_COMMANDS_SOURCES verifier/store/credentials_file.cpp verifier/commands/authenticated.cpp)
