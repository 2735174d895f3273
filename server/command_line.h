// The command line of the project's executables (syncwrite-server,
// syncwrite-cli, idle_cpu): their flags are Abseil flags (ABSL_FLAG), each
// executable's in its own file, and this helper sets them from argv.
//
// Why not absl::ParseCommandLine: it exits the process (status 1) on a bad
// flag and on --help, so it can be neither tested as a function nor give the
// usage-error status 2 the executables promise; and it spells names as they
// are declared (port_file), where these command lines have always said
// --port-file. The rest is absl's: declaring, typed parsing (integers with
// their type's range, doubles, bools, lists, optionals), defaults and the
// flag registry that help is printed from.
//
// Syntax:
//   --name=value or --name value   a flag with a value; a '-' in the name is
//                                  the '_' of the declared name (--port-file)
//   --name, --noname               a bool flag set or cleared (--name=false too)
//   --                             everything after it is positional
//   -h, --help                     help was asked for
//   anything else                  positional, in order, wherever it stands
//                                  (a lone "-5" too: only "--" starts a flag)
//
// The flags are process-global: parse from one thread at a time, and read the
// values into the executable's options struct right after (see
// server/server_flags.cc). Each executable's flags live in one file, which
// names them: a parse sets only that file's flags, and resets them to their
// defaults first, so parsing is repeatable (tests parse many command lines).
// absl::FlagSaver is not used for that: restoring logs a line per flag.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::server {

// What parseFlags found besides flag values.
struct CommandLine {
  std::vector<std::string> positional;
  bool help = false;
};

// Resets every flag declared in a file whose path ends with `flags_file` to
// its default, then sets those named in `args` (argv without the program
// name). Errors, InvalidArgument, the first one found: "unknown flag --x"
// (also for a flag of another file), "--x needs a value", "--x: illegal value
// 'v'" (absl refused the text for the flag's type; its reason follows when it
// gives one). Flags set before an error keep their new values until the next
// parse.
absl::StatusOr<CommandLine> parseFlags(std::span<const std::string> args,
                                       std::string_view flags_file);

// The help text: `header` as given, then "flags:" and every flag declared in a
// file whose path ends with `flags_file`, sorted by name, each as
//   "  --name  help (default: value)"
// with '_' shown as '-', a string default in quotes, an empty optional's as
// none, and the text wrapped at 80 columns under its first word (the
// "(default: value)" kept whole).
std::string flagsHelp(std::string_view header, std::string_view flags_file);

}  // namespace syncwrite::server
