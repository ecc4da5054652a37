# Finds the ZooKeeper C client, multi-threaded flavour (Debian: libzookeeper-mt-dev).
# The package ships no pkg-config file or CMake config, hence this module.
# Defines the imported target ZooKeeper::zookeeper_mt (compiled with THREADED, as the mt library requires).
find_path(ZooKeeperMT_INCLUDE_DIR zookeeper/zookeeper.h)
find_library(ZooKeeperMT_LIBRARY zookeeper_mt)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeperMT REQUIRED_VARS ZooKeeperMT_LIBRARY ZooKeeperMT_INCLUDE_DIR)

if(ZooKeeperMT_FOUND AND NOT TARGET ZooKeeper::zookeeper_mt)
  find_package(Threads REQUIRED)
  add_library(ZooKeeper::zookeeper_mt UNKNOWN IMPORTED)
  set_target_properties(ZooKeeper::zookeeper_mt PROPERTIES
    IMPORTED_LOCATION "${ZooKeeperMT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeperMT_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS THREADED
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(ZooKeeperMT_INCLUDE_DIR ZooKeeperMT_LIBRARY)
