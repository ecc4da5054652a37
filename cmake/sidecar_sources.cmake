# zkverify serve and probe (issue 10): sources by library. Paths are relative to the top source directory.
set(ZKVERIFY_SIDECAR_MODEL_SOURCES)
set(ZKVERIFY_SIDECAR_PROBES_SOURCES)
set(ZKVERIFY_SIDECAR_COMMANDS_SOURCES verifier/commands/serve.cpp verifier/commands/probe.cpp)
