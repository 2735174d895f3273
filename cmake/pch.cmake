# Precompiled headers (SYNCWRITE_PCH; the clang preset turns it on): the
# third-party and standard headers that most translation units include are
# parsed once instead of once per source file. Two precompiled headers are
# built, one for the libraries and executables and one, with GoogleTest and
# GoogleMock added, for the tests; every C++ target reuses one of them
# (REUSE_FROM), so all targets must share the compile flags they were built
# with (the presets set flags globally).
#
# It serves ./dev lint: clang-tidy reads the clang preset's compile commands,
# precompiled header included, and clang loads a precompiled header lazily.
# GCC's is a 200 MB image that every compile maps: two cores building four
# sources at once ran 40% longer with it than without, so the gcc presets do
# not use it. Only headers from outside the tree go in, so clang-tidy still
# parses and analyses our own headers per file.
option(SYNCWRITE_PCH "Precompile the common third-party headers" OFF)

set(SYNCWRITE_PCH_HEADERS
  <algorithm> <atomic> <chrono> <cstdint> <filesystem> <functional> <map> <memory>
  <mutex> <optional> <string> <string_view> <thread> <utility> <vector>
  <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h>
  <boost/asio/io_context.hpp> <boost/asio/ip/tcp.hpp> <boost/asio/post.hpp>
  <boost/asio/steady_timer.hpp> <nlohmann/json.hpp>)

# syncwrite_precompile_headers(): after every folder has added its targets.
function(syncwrite_precompile_headers)
  if(NOT SYNCWRITE_PCH)
    return()
  endif()
  set(empty ${PROJECT_SOURCE_DIR}/cmake/pch_owner.cc)
  add_library(syncwrite_pch OBJECT ${empty})
  target_link_libraries(syncwrite_pch PRIVATE Boost::headers absl::status absl::statusor
                                              absl::strings nlohmann_json::nlohmann_json)
  target_precompile_headers(syncwrite_pch PRIVATE ${SYNCWRITE_PCH_HEADERS})
  add_library(syncwrite_pch_test OBJECT ${empty})
  target_link_libraries(syncwrite_pch_test PRIVATE Boost::headers absl::status absl::statusor
                                                   absl::strings nlohmann_json::nlohmann_json
                                                   GTest::gmock GTest::gtest)
  target_precompile_headers(syncwrite_pch_test PRIVATE ${SYNCWRITE_PCH_HEADERS}
                            <gtest/gtest.h> <gmock/gmock.h>)

  set(dirs ${PROJECT_SOURCE_DIR})
  set(targets "")
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(sub DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${sub})
    get_property(in_dir DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    list(APPEND targets ${in_dir})
  endwhile()
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$" OR t MATCHES "^syncwrite_pch")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(libs MATCHES "GTest::")
      target_precompile_headers(${t} REUSE_FROM syncwrite_pch_test)
    else()
      target_precompile_headers(${t} REUSE_FROM syncwrite_pch)
    endif()
  endforeach()
endfunction()
