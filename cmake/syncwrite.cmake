# Helpers shared by every layer's CMakeLists.txt.

# syncwrite_test(NAME SOURCES... LIBS lib...)
# A GoogleTest binary in <build>/bin/, registered with ctest test by test.
function(syncwrite_test name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

# syncwrite_bench(NAME SOURCES... LIBS lib...)
# A Google Benchmark binary in <build>/bin/.
function(syncwrite_bench name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark_main)
endfunction()

# syncwrite_layer(LAYER SOURCES... DEPS target...)
# One layer's library: target syncwrite_<LAYER>, alias syncwrite::<LAYER>, headers
# included from the repository root ("clock/coarse_clock.h"), DEPS linked publicly.
function(syncwrite_layer layer)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  add_library(syncwrite_${layer} ${ARG_UNPARSED_ARGUMENTS})
  add_library(syncwrite::${layer} ALIAS syncwrite_${layer})
  target_include_directories(syncwrite_${layer} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(syncwrite_${layer} PUBLIC ${ARG_DEPS})
endfunction()
