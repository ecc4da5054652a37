# zkverify serve and probe (issue 10): sources by library. Paths are relative to the top source directory.
set(ZKVERIFY_SIDECAR_MODEL_SOURCES
  verifier/judge/readiness.cpp
  verifier/render/metrics.cpp
  verifier/render/status_page.cpp
  verifier/sidecar/routes.cpp)
set(ZKVERIFY_SIDECAR_PROBES_SOURCES)
set(ZKVERIFY_SIDECAR_COMMANDS_SOURCES
  verifier/sidecar/cycle.cpp
  verifier/sidecar/http_server.cpp
  verifier/commands/serve.cpp
  verifier/commands/probe.cpp)
