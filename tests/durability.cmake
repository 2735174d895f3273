syncwrite_test(durability_test durability_monitor_test.cc LIBS syncwrite::durability)
