// Logging for syncwrite-server: one line per event on stderr.
//
//   2024-05-01T12:00:00.123Z syncwrite-server: bucket "default" created: 1024 active vbuckets, ...
//
// Each line is written with one write(2) call, so lines from different threads
// never interleave. Events worth a line: start (with where it listens), each
// bucket created, a timeout mode switched, errors, shutdown. Never called per
// request.
#pragma once

#include <string_view>

namespace syncwrite::server {

// Writes `message` as one timestamped line to stderr, or to the sink. Thread-safe.
void logLine(std::string_view message);

// Receives each whole line (timestamp and newline included) instead of
// stderr. For a process whose stderr carries something else: the fuzz targets
// (tests/fuzz/), where stderr is libFuzzer's and the sanitizers' channel and
// would otherwise take several lines per input. Null (the default) means
// stderr. Thread-safe; `sink` may be called from any thread, concurrently.
using LogSink = void (*)(std::string_view line);
void setLogSink(LogSink sink) noexcept;

}  // namespace syncwrite::server
