# The idle-CPU harness (bench/idle_cpu): unit tests of its parsing and
# arithmetic. bench/ is processed after tests/, so the library is named by its
# real target name (resolved when the build is generated).
syncwrite_test(idle_cpu_parse_test idle_cpu_proc_stat_test.cc idle_cpu_usage_test.cc
  idle_cpu_task_stats_test.cc idle_cpu_options_test.cc idle_cpu_report_test.cc
  idle_cpu_scenario_test.cc idle_cpu_server_process_test.cc
  LIBS syncwrite_bench_idle_cpu)

# The smoke run of the real harness against the real server (issue 7's CI
# check). idle_cpu is defined later, in bench/, which is fine for generator
# expressions and dependencies (both resolved at generate time).
syncwrite_test(idle_cpu_smoke_test idle_cpu_smoke_test.cc LIBS syncwrite::config
  nlohmann_json::nlohmann_json)
target_compile_definitions(idle_cpu_smoke_test PRIVATE
  SYNCWRITE_IDLE_CPU_BIN="$<TARGET_FILE:idle_cpu>"
  SYNCWRITE_SERVER_BIN="$<TARGET_FILE:syncwrite-server>")
add_dependencies(idle_cpu_smoke_test idle_cpu syncwrite-server)
