# zkverify smoke (issue 11): sources by library. Paths are relative to the top source directory.
set(ZKVERIFY_SMOKE_MODEL_SOURCES)
set(ZKVERIFY_SMOKE_PROBES_SOURCES)
set(ZKVERIFY_SMOKE_COMMANDS_SOURCES verifier/commands/smoke.cpp)
