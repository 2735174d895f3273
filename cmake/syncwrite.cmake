# Helpers shared by every layer's CMakeLists.txt.

option(SYNCWRITE_UNITY_TESTS "Compile each test executable's sources six at a time as one" OFF)

# syncwrite_test(NAME SOURCES... LIBS lib...)
# A GoogleTest binary in <build>/bin/, registered with ctest test by test.
# Its sources are recorded for syncwrite_check_test_registration().
#
# With SYNCWRITE_UNITY_TESTS (the gcc presets), the sources are compiled six
# at a time: generated files <build>/.../unity/NAME_N.cc include them by their
# path from the repository root, so GoogleTest's and our headers are parsed once
# per six sources, and the generated text is the same in every clone (ccache
# hits across clones; CMake's own UNITY_BUILD writes absolute paths). A test
# source must then not reuse a name another source of its executable defines
# in an anonymous namespace; the clang preset compiles each on its own.
function(syncwrite_test name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  set(compiled ${ARG_UNPARSED_ARGUMENTS})
  if(SYNCWRITE_UNITY_TESTS)
    set(compiled "")
    set(text "")
    set(count 0)
    set(batch 0)
    foreach(src IN LISTS ARG_UNPARSED_ARGUMENTS)
      get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
      string(APPEND text "#include \"${rel}\"\n")
      math(EXPR count "${count} + 1")
      if(count EQUAL 6)
        set(out ${CMAKE_CURRENT_BINARY_DIR}/unity/${name}_${batch}.cc)
        file(CONFIGURE OUTPUT ${out} CONTENT "${text}" @ONLY)
        list(APPEND compiled ${out})
        math(EXPR batch "${batch} + 1")
        set(text "")
        set(count 0)
      endif()
    endforeach()
    if(count GREATER 0)
      set(out ${CMAKE_CURRENT_BINARY_DIR}/unity/${name}_${batch}.cc)
      file(CONFIGURE OUTPUT ${out} CONTENT "${text}" @ONLY)
      list(APPEND compiled ${out})
    endif()
  endif()
  add_executable(${name} ${compiled})
  foreach(src IN LISTS ARG_UNPARSED_ARGUMENTS)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    set_property(GLOBAL APPEND PROPERTY SYNCWRITE_TEST_SOURCES ${abs})
  endforeach()
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
# included from the repository root ("clock/coarse_clock.h"), DEPS and
# syncwrite::base (base/: the annotated mutexes, BorrowedView) linked publicly. Installed,
# the same includes resolve under <prefix>/include/syncwrite (cmake/install.cmake).
function(syncwrite_layer layer)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  add_library(syncwrite_${layer} ${ARG_UNPARSED_ARGUMENTS})
  add_library(syncwrite::${layer} ALIAS syncwrite_${layer})
  target_include_directories(syncwrite_${layer} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
  target_link_libraries(syncwrite_${layer} PUBLIC syncwrite::base ${ARG_DEPS})
endfunction()

# syncwrite_check_test_registration()
# Fails the configure when a tests/**/*.cc belongs to no syncwrite_test target:
# a test file nobody registered would otherwise never run, with CI green.
# Called once, after every folder has registered its tests. The glob is
# CONFIGURE_DEPENDS, so adding a file re-runs this check on the next build.
function(syncwrite_check_test_registration)
  file(GLOB_RECURSE test_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/*.cc)
  # tests/sdk/node_modules holds the Node SDK that npm installs, C++ sources included.
  list(FILTER test_files EXCLUDE REGEX "/node_modules/")
  get_property(registered GLOBAL PROPERTY SYNCWRITE_TEST_SOURCES)
  set(orphans "")
  foreach(f IN LISTS test_files)
    if(NOT f IN_LIST registered)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${f})
      list(APPEND orphans ${rel})
    endif()
  endforeach()
  if(orphans)
    list(JOIN orphans "\n  " text)
    message(FATAL_ERROR "test files registered with no test target (add each to a "
                        "syncwrite_test() in tests/):\n  ${text}")
  endif()
endfunction()

# syncwrite_fuzz_target(NAME SOURCE LIBS lib...)
# A libFuzzer target NAME_fuzz in <build>/bin/ from SOURCE, which defines
# LLVMFuzzerTestOneInput, with its seed corpus in tests/fuzz/corpus/NAME/.
# With SYNCWRITE_FUZZ (the fuzz preset) it links libFuzzer and joins the
# `fuzz` target. Otherwise it links tests/fuzz/replay_main.cc instead and
# ctest runs it over the seed corpus: every preset checks the corpus (and the
# crashers kept in it) against the target's properties, and the compile
# database that ./dev lint's clang-tidy reads holds the fuzz sources.
# Its sources count as registered for syncwrite_check_test_registration().
function(syncwrite_fuzz_target name source)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  set(target ${name}_fuzz)
  add_executable(${target} ${source})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  get_filename_component(abs ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(GLOBAL APPEND PROPERTY SYNCWRITE_TEST_SOURCES ${abs})
  set(replay ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cc)
  set_property(GLOBAL APPEND PROPERTY SYNCWRITE_TEST_SOURCES ${replay})
  if(SYNCWRITE_FUZZ)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    add_dependencies(fuzz ${target})
  else()
    target_sources(${target} PRIVATE ${replay})
    target_link_libraries(${target} PRIVATE syncwrite::config)
    add_test(NAME ${target}.corpus
             COMMAND ${target} ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name})
  endif()
endfunction()
