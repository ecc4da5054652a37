# Finds MIT Kerberos's client library (Debian: libkrb5-dev), which tells zkverify when its own
# Kerberos credentials expire (probes/kerberos.cpp). Defines the imported target MITKerberos::krb5.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MITKerberos QUIET IMPORTED_TARGET GLOBAL krb5)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MITKerberos REQUIRED_VARS MITKerberos_LINK_LIBRARIES)

if(MITKerberos_FOUND AND NOT TARGET MITKerberos::krb5)
  add_library(MITKerberos::krb5 ALIAS PkgConfig::MITKerberos)
endif()
