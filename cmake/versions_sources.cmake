# versions (issue 17): sources by library, relative to the top source directory.
set(ZKVERIFY_VERSIONS_MODEL_SOURCES)
set(ZKVERIFY_VERSIONS_PROBES_SOURCES)
set(ZKVERIFY_VERSIONS_COMMANDS_SOURCES)
