# The MCBP codec, the blocking client (server/protocol/) and syncwrite-cli (server/cli/).
syncwrite_test(protocol_test
  protocol_codec_test.cc
  protocol_malformed_test.cc
  protocol_reader_test.cc
  protocol_response_test.cc
  protocol_client_test.cc
  protocol_cli_test.cc
  cli_failover_plan_test.cc
  LIBS syncwrite::protocol syncwrite_cli_lib
)
