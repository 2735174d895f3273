# bench/timeout_precision's lateness summary. bench/ is processed after
# tests/, so the library is named by its real target name.
syncwrite_test(timeout_precision_test timeout_precision_test.cc LIBS syncwrite_bench_lateness)
