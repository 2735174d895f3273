# bench/mcbp_load: the histogram's unit test, and a one-second smoke run of the
# real program against the real server. bench/ is processed after tests/, so
# the library and the program are named by their real target names (resolved
# when the build is generated).
syncwrite_test(mcbp_load_histogram_test mcbp_load_histogram_test.cc
  LIBS syncwrite_bench_mcbp_load)

syncwrite_test(mcbp_load_smoke_test mcbp_load_smoke_test.cc
  LIBS syncwrite::protocol syncwrite::config nlohmann_json::nlohmann_json)
target_compile_definitions(mcbp_load_smoke_test PRIVATE
  SYNCWRITE_MCBP_LOAD_BIN="$<TARGET_FILE:mcbp_load>"
  SYNCWRITE_SERVER_BINARY="$<TARGET_FILE:syncwrite-server>")
add_dependencies(mcbp_load_smoke_test mcbp_load syncwrite-server)
