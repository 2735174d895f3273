# syncwrite-server: unit tests of its pieces, and integration tests that run
# the real binary (its path is compiled in; building the test builds it).
syncwrite_test(server_unit_test server_options_test.cc server_config_test.cc
  server_command_line_test.cc server_replica_faults_unit_test.cc server_log_test.cc
  server_turn_queue_test.cc server_answer_slot_test.cc
  server_busy_yield_test.cc server_read_prefetch_test.cc
  server_stored_vbucket_state_test.cc
  LIBS syncwrite::server syncwrite_server_flags)

syncwrite_test(server_integration_test server_durability_test.cc server_answer_order_test.cc
  server_process_test.cc
  server_bootstrap_test.cc server_memcached_test.cc server_replica_faults_test.cc
  server_memory_test.cc server_flusher_test.cc server_network_abuse_test.cc
  server_fidelity_test.cc replication_process_test.cc replication_failover_test.cc
  server_persistence_test.cc server_crash_test.cc server_disk_failure_test.cc
  replication_metrics_test.cc server_subdoc_test.cc
  LIBS syncwrite::protocol syncwrite::config syncwrite::command_line nlohmann_json::nlohmann_json
       syncwrite_cli_lib)
target_compile_definitions(server_integration_test
  PRIVATE SYNCWRITE_SERVER_BINARY="$<TARGET_FILE:syncwrite-server>"
          SYNCWRITE_SERVER_MALLOC="${SYNCWRITE_MALLOC}")
add_dependencies(server_integration_test syncwrite-server)

syncwrite_test(sasl_test sasl_test.cc LIBS syncwrite::sasl absl::strings)
