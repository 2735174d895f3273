// readFile: the whole contents of a file, as one string.
//
// The one file reader of the project: configuration files, port files, /proc
// entries, logs read back by tests. It reads with open(2)/read(2) until end of
// file, so a file whose size is not known ahead (/proc, a pipe) reads whole,
// and a failing read is an error rather than a short string.
#pragma once

#include <filesystem>
#include <string>

#include <absl/status/statusor.h>

namespace syncwrite::config {

// The bytes of the file at `path`. Errors name the path and the system's
// reason, with the code absl::ErrnoToStatus gives errno: kNotFound for a
// missing file (ENOENT) or a /proc entry whose task has exited (ESRCH),
// kPermissionDenied for EACCES, and so on. Cost: one open, a read per 64 KiB,
// one close.
absl::StatusOr<std::string> readFile(const std::filesystem::path& path);

}  // namespace syncwrite::config
