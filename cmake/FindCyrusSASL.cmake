# Finds Cyrus SASL's client library (Debian: libsasl2-dev; its mechanisms are plugins, DIGEST-MD5
# in libsasl2-modules), which the relay speaks SASL with for the C client built without it.
# Defines the imported target CyrusSASL::sasl2.
find_path(CyrusSASL_INCLUDE_DIR sasl/sasl.h)
find_library(CyrusSASL_LIBRARY sasl2)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CyrusSASL REQUIRED_VARS CyrusSASL_LIBRARY CyrusSASL_INCLUDE_DIR)

if(CyrusSASL_FOUND AND NOT TARGET CyrusSASL::sasl2)
  add_library(CyrusSASL::sasl2 UNKNOWN IMPORTED)
  set_target_properties(CyrusSASL::sasl2 PROPERTIES
    IMPORTED_LOCATION "${CyrusSASL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CyrusSASL_INCLUDE_DIR}")
endif()
mark_as_advanced(CyrusSASL_INCLUDE_DIR CyrusSASL_LIBRARY)
