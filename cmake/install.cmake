# What `cmake --install <build> --prefix P` (./dev install P) puts under P:
#
#   include/syncwrite/<layer>/*.h       the public headers, nothing else
#   lib/libsyncwrite_<layer>.a          the layer libraries (static)
#   lib/cmake/syncwrite/                syncwriteConfig.cmake, ...ConfigVersion.cmake,
#                                       the exported targets syncwrite::base ... ::durability
#   lib/pkgconfig/syncwrite.pc          for builds without CMake
#   bin/syncwrite-server, syncwrite-cli
#
# (lib is lib/<multiarch> when configured for the /usr prefix, as GNUInstallDirs says.)
# Includes keep the form they have in this repository, written from the root
# ("durability/bucket_durability.h"), with P/include/syncwrite on the include
# path: the exported targets and the .pc file both add it. An embedder's code
# and ours read the same. docs/embedding.md names the public API and what
# "stable" means for it; examples/embed builds against this tree in CI.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SYNCWRITE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/syncwrite)
set(SYNCWRITE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/syncwrite)

# The layers an embedder links, in dependency order. The server layer, the
# protocol and the CLI stay out: they are one embedder of these, shipped as
# executables.
set(SYNCWRITE_EXPORTED_LAYERS base clock config executor vbucket durability)

# The public headers: what bucket_durability.h needs (every header it includes,
# transitively), the clocks an embedder chooses from, and the generated keys.
# Everything else (monitors, timeout tasks, the executor's queues, visitors)
# is internal and not installed. syncwrite_check_public_headers() below fails
# the configure when a public header includes one that is not listed here.
set(SYNCWRITE_PUBLIC_HEADERS
  base/borrowed_view.h
  base/mutex.h
  clock/clock_ref.h
  clock/coarse_clock.h
  clock/manual_clock.h
  clock/precise_clock.h
  clock/syscall_clock.h
  clock/time.h
  config/configuration.h
  config/key.h
  config/schema.h
  durability/bucket_durability.h
  durability/commit_latency.h
  durability/completion.h
  durability/level.h
  durability/passive_durability_monitor.h
  durability/requirements.h
  durability/resolved_writes.h
  durability/sync_write.h
  durability/timeout_lateness.h
  durability/timeout_mode.h
  durability/topology.h
  executor/executor_pool.h
  executor/task.h
  executor/task_record.h
  vbucket/bucket_memory.h
  vbucket/checkpoint.h
  vbucket/checkpoint_manager.h
  vbucket/failover_table.h
  vbucket/expelled_items.h
  vbucket/hash_table.h
  vbucket/item.h
  vbucket/item_key.h
  vbucket/flusher.h
  vbucket/log_cursor_reader.h
  vbucket/vbucket.h
  vbucket/vbucket_map.h
  vbucket/vbucket_state.h
)
# Generated into the build tree (config/CMakeLists.txt), public all the same.
set(SYNCWRITE_GENERATED_PUBLIC_HEADERS config/keys.h)

# syncwrite_check_public_headers()
# Fails the configure when a public header includes (#include "...") a header
# of ours that is not public: the installed tree would not compile. Cheap
# (reads ~30 files), so it runs on every configure, like the test check.
function(syncwrite_check_public_headers)
  set(public ${SYNCWRITE_PUBLIC_HEADERS} ${SYNCWRITE_GENERATED_PUBLIC_HEADERS})
  set(problems "")
  foreach(header IN LISTS SYNCWRITE_PUBLIC_HEADERS)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${header})
    file(STRINGS ${PROJECT_SOURCE_DIR}/${header} lines REGEX "^#include \"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
      if(NOT included IN_LIST public)
        list(APPEND problems "${header} includes ${included}")
      endif()
    endforeach()
  endforeach()
  if(problems)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR "a public header includes an internal one (make it public in "
                        "cmake/install.cmake and docs/embedding.md, or drop the include):\n  ${text}")
  endif()
endfunction()
syncwrite_check_public_headers()

foreach(header IN LISTS SYNCWRITE_PUBLIC_HEADERS)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${header} DESTINATION ${SYNCWRITE_INSTALL_INCLUDEDIR}/${dir})
endforeach()
# config/keys.h is generated in the build tree; config/CMakeLists.txt knows where.
get_directory_property(keys_header DIRECTORY config DEFINITION SYNCWRITE_KEYS_HEADER)
if(NOT keys_header)
  message(FATAL_ERROR "config/CMakeLists.txt no longer defines SYNCWRITE_KEYS_HEADER")
endif()
install(FILES ${keys_header} DESTINATION ${SYNCWRITE_INSTALL_INCLUDEDIR}/config)

# Exported as syncwrite::<layer> (the names used inside this tree too).
foreach(layer IN LISTS SYNCWRITE_EXPORTED_LAYERS)
  set_target_properties(syncwrite_${layer} PROPERTIES EXPORT_NAME ${layer})
  list(APPEND exported_targets syncwrite_${layer})
endforeach()
install(TARGETS ${exported_targets}
  EXPORT syncwriteTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${SYNCWRITE_INSTALL_INCLUDEDIR})
install(EXPORT syncwriteTargets NAMESPACE syncwrite:: DESTINATION ${SYNCWRITE_INSTALL_CMAKEDIR})

install(TARGETS syncwrite-server syncwrite-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/syncwriteConfig.cmake.in
  ${PROJECT_BINARY_DIR}/syncwriteConfig.cmake
  INSTALL_DESTINATION ${SYNCWRITE_INSTALL_CMAKEDIR})
# 0.x.y: a package of the same minor version (docs/embedding.md, "Stability").
write_basic_package_version_file(${PROJECT_BINARY_DIR}/syncwriteConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/syncwriteConfig.cmake
              ${PROJECT_BINARY_DIR}/syncwriteConfigVersion.cmake
        DESTINATION ${SYNCWRITE_INSTALL_CMAKEDIR})

# The .pc file finds its prefix from where it lies, so it is right for any
# `--prefix` given at install time, not only the configured one.
file(RELATIVE_PATH SYNCWRITE_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SYNCWRITE_PC_TO_PREFIX "${SYNCWRITE_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/syncwrite.pc.in ${PROJECT_BINARY_DIR}/syncwrite.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/syncwrite.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
