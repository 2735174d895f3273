# bench/timeout_precision's lateness summary. bench/ is processed after
# tests/, so the library is named by its real target name.
syncwrite_test(timeout_precision_test timeout_precision_test.cc LIBS syncwrite_bench_lateness)

# A one-second run of the real program in each mode against the real server
# (which the program starts). bench/ is processed after tests/: the targets
# are named by their real names, resolved when the build is generated.
syncwrite_test(timeout_precision_smoke_test timeout_precision_smoke_test.cc
  LIBS syncwrite::config nlohmann_json::nlohmann_json)
target_compile_definitions(timeout_precision_smoke_test PRIVATE
  SYNCWRITE_TIMEOUT_PRECISION_BIN="$<TARGET_FILE:timeout_precision>"
  SYNCWRITE_SERVER_BINARY="$<TARGET_FILE:syncwrite-server>")
add_dependencies(timeout_precision_smoke_test timeout_precision syncwrite-server)
