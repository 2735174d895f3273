# bench/soak: the model's unit test, and a six-second run of the real program
# against the real server (bench/ is processed after tests/: targets are named
# by their real names, resolved when the build is generated).
syncwrite_test(soak_model_test soak_model_test.cc LIBS syncwrite_bench_soak_model)

syncwrite_test(soak_smoke_test soak_smoke_test.cc
  LIBS syncwrite::config nlohmann_json::nlohmann_json)
target_compile_definitions(soak_smoke_test PRIVATE
  SYNCWRITE_SOAK_BIN="$<TARGET_FILE:soak>"
  SYNCWRITE_SERVER_BINARY="$<TARGET_FILE:syncwrite-server>")
add_dependencies(soak_smoke_test soak syncwrite-server)
