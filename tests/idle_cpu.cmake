# The idle-CPU harness (bench/idle_cpu): unit tests of its parsing and
# arithmetic. bench/ is processed after tests/, so the library is named by its
# real target name (resolved when the build is generated).
syncwrite_test(idle_cpu_parse_test idle_cpu_proc_stat_test.cc idle_cpu_usage_test.cc
  idle_cpu_task_stats_test.cc idle_cpu_options_test.cc idle_cpu_report_test.cc
  idle_cpu_scenario_test.cc idle_cpu_server_process_test.cc
  LIBS syncwrite_bench_idle_cpu)
