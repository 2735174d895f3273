# The MCBP codec and the blocking client (server/protocol/).
syncwrite_test(protocol_test
  protocol_codec_test.cc
  protocol_reader_test.cc
  protocol_response_test.cc
  protocol_client_test.cc
  LIBS syncwrite::protocol
)
