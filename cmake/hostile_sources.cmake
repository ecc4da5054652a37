# hostile (issue 13, parts 2-3): sources by library, relative to the top source directory.
set(ZKVERIFY_HOSTILE_MODEL_SOURCES)
set(ZKVERIFY_HOSTILE_PROBES_SOURCES)
set(ZKVERIFY_HOSTILE_COMMANDS_SOURCES)
