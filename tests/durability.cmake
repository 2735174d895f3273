syncwrite_test(durability_test durability_monitor_test.cc durability_bucket_test.cc
  durability_stress_test.cc durability_behind_head_test.cc durability_never_early_test.cc
  durability_storm_test.cc durability_timeout_lateness_test.cc durability_log_test.cc
  durability_ephemeral_test.cc
  LIBS syncwrite::durability)
syncwrite_test(dcp_test dcp_stream_test.cc LIBS syncwrite::dcp)
