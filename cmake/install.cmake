# Installation and packaging (issue 14): `cmake --install BUILD --prefix P` and `cpack -G DEB`
# (scripts/package.sh). The version everywhere is PROJECT_VERSION.
include(GNUInstallDirs)

# The man pages are generated from the built binary's own --help and --version, the bash, zsh and
# fish completions by the binary itself (deploy/package/gen-docs.sh), so they cannot drift from its
# options. Without help2man the build still works: only the man pages are left out. Sanitizer builds
# skip this step (running the binary at build time there would only test the sanitizers' options,
# and nothing installs them).
option(ZKVERIFY_DOCS "Generate the man pages and the shell completions at build time" ON)
if(ZKVERIFY_SANITIZE)
  set(ZKVERIFY_DOCS OFF)
endif()

set(ZKVERIFY_DOCS_DIR "${CMAKE_CURRENT_BINARY_DIR}/docs")
set(ZKVERIFY_PACKAGE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/deploy/package")
if(ZKVERIFY_DOCS)
  find_program(HELP2MAN_EXECUTABLE help2man)
  set(gen_docs_args)
  if(NOT HELP2MAN_EXECUTABLE)
    message(STATUS "help2man not found: the man pages are skipped (apt-get install help2man)")
    set(gen_docs_args --no-man)
  endif()
  add_custom_command(
    OUTPUT "${ZKVERIFY_DOCS_DIR}/stamp"
    COMMAND "${ZKVERIFY_PACKAGE_DIR}/gen-docs.sh" "$<TARGET_FILE:zkverify>" "${ZKVERIFY_DOCS_DIR}" ${gen_docs_args}
    COMMAND "${CMAKE_COMMAND}" -E touch "${ZKVERIFY_DOCS_DIR}/stamp"
    DEPENDS zkverify "${ZKVERIFY_PACKAGE_DIR}/gen-docs.sh"
    COMMENT "Generating zkverify's man pages and shell completions"
    VERBATIM)
  add_custom_target(zkverify_docs ALL DEPENDS "${ZKVERIFY_DOCS_DIR}/stamp")
endif()

# Debian's changelog for the .deb, compressed as lintian wants it (gzip -9n: no name, no time).
set(ZKVERIFY_CHANGELOG_GZ "${CMAKE_CURRENT_BINARY_DIR}/changelog.gz")
add_custom_command(
  OUTPUT "${ZKVERIFY_CHANGELOG_GZ}"
  COMMAND sh -c "gzip -9n < \"$0\" > \"$1\"" "${ZKVERIFY_PACKAGE_DIR}/changelog" "${ZKVERIFY_CHANGELOG_GZ}"
  DEPENDS "${ZKVERIFY_PACKAGE_DIR}/changelog"
  VERBATIM)
add_custom_target(zkverify_changelog ALL DEPENDS "${ZKVERIFY_CHANGELOG_GZ}")

# The changelog's newest entry must be this version (lintian and dpkg read it from the .deb).
file(STRINGS "${ZKVERIFY_PACKAGE_DIR}/changelog" changelog_head LIMIT_COUNT 1)
if(NOT changelog_head MATCHES "^zkverify \\(${PROJECT_VERSION}\\) ")
  message(WARNING "deploy/package/changelog's newest entry is not zkverify (${PROJECT_VERSION}): "
    "add one for this version before packaging")
endif()

install(TARGETS zkverify RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
if(ZKVERIFY_DOCS)
  if(HELP2MAN_EXECUTABLE)
    install(DIRECTORY "${ZKVERIFY_DOCS_DIR}/man/" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
      FILES_MATCHING PATTERN "*.1.gz")
  endif()
  # Where each shell's own package looks (bash-completion's, zsh's and fish's vendor directories).
  install(FILES "${ZKVERIFY_DOCS_DIR}/completion/zkverify"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions")
  install(FILES "${ZKVERIFY_DOCS_DIR}/completion/_zkverify"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions")
  install(FILES "${ZKVERIFY_DOCS_DIR}/completion/zkverify.fish"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d")
endif()
install(FILES README.md DESTINATION "${CMAKE_INSTALL_DOCDIR}")
# The licence: LICENSE for `cmake --install`; the .deb carries Debian's copyright file instead
# (it points at /usr/share/common-licenses/Apache-2.0; lintian flags a second copy).
install(FILES LICENSE DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT licence)
# Debian's copyright and changelog go into the .deb only (cpack asks for this component by name).
install(FILES "${ZKVERIFY_PACKAGE_DIR}/copyright" "${ZKVERIFY_CHANGELOG_GZ}"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT debian EXCLUDE_FROM_ALL)

# cpack -G DEB. scripts/package.sh runs it; CPACK_COMPONENTS_ALL leaves LICENSE out of the .deb.
# cpack (and `make install`) would otherwise build everything first, the tests too; package.sh
# builds only what the package holds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zkverify)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "zkverify")
set(CPACK_PACKAGE_CONTACT "zkverify maintainers <zkverify@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ZooKeeper ensemble health verifier for rolling upgrades")
# The .deb's extended description (lines under 80 columns, as lintian wants).
set(CPACK_PACKAGE_DESCRIPTION
  "zkverify answers one question between the manual steps of a ZooKeeper
rolling upgrade: is it safe to go on? It asks every server what it is
(srvr, mntr, conf, isro, the AdminServer), writes a test znode through one
server and reads it back after sync through every other, and exits 0 only
when the ensemble is healthy. It also orders restarts, gates each one,
watches client sessions during them, and runs as a readiness sidecar
(serve, probe) and as a CI smoke check.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# One package of the listed components (a monolithic one would ignore the list).
set(CPACK_COMPONENTS_ALL Unspecified debian)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/zkverify/zkverify")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# SASL's mechanisms are plugins of libsasl2 (loaded at run time, so dpkg-shlibdeps cannot see them):
# DIGEST-MD5, and GSSAPI (Kerberos).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libsasl2-modules, libsasl2-modules-gssapi-mit")
# Directories the package shares with others are not its own (lintian, dpkg -r).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
include(CPack)
