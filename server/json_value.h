// Whether a value is JSON: what the server stores as an item's datatype, as
// kv_engine decides it on SET, ADD, REPLACE, APPEND and PREPEND (it does not
// trust the datatype the client sent; daemon/protocol/mcbp/
// steppable_command_context.cc, setDatatypeJSONFromValue).
//
// Validated with simdjson (Debian's libsimdjson-dev): the whole text must be
// one JSON value in valid UTF-8, surrounded by nothing but whitespace.
#pragma once

#include <string_view>

namespace syncwrite::server {

// True when `value` is a JSON document. Thread-safe: each thread keeps its
// own parser, which grows to the largest value it has checked up to 1 MiB
// and is released after a larger one. A value whose first byte after
// whitespace cannot begin JSON is refused without simdjson. Otherwise it
// costs a copy into the parser's padded buffer and simdjson's two passes:
// about 130 ns for a 100-byte document here (docs/benchmarks.md has the SET
// path's figure), plus, for a value over 1 MiB, the parser's allocation.
bool isJson(std::string_view value);

}  // namespace syncwrite::server
