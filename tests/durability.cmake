syncwrite_test(durability_test durability_monitor_test.cc durability_bucket_test.cc
  durability_stress_test.cc LIBS syncwrite::durability)
