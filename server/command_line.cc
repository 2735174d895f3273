#include "server/command_line.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <absl/flags/commandlineflag.h>
#include <absl/flags/reflection.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>
#include <absl/strings/str_split.h>
#include <absl/strings/strip.h>

namespace syncwrite::server {
namespace {

constexpr size_t kLineWidth = 80;  // of the help text

// Debian's Abseil has its own string_view (not std::string_view), so the
// helper speaks absl::string_view to it.
std::string declaredName(absl::string_view name) { return absl::StrReplaceAll(name, {{"-", "_"}}); }
std::string shownName(absl::string_view name) { return absl::StrReplaceAll(name, {{"_", "-"}}); }

// The flags declared in a file whose path ends with `flags_file`, by name.
std::vector<absl::CommandLineFlag*> flagsOf(std::string_view flags_file) {
  std::vector<absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::EndsWith(flag->Filename(), absl::string_view(flags_file.data(), flags_file.size()))) {
      flags.push_back(flag);
    }
  }
  std::sort(flags.begin(), flags.end(), [](auto* a, auto* b) { return a->Name() < b->Name(); });
  return flags;
}

}  // namespace

absl::StatusOr<CommandLine> parseFlags(std::span<const std::string> args,
                                       std::string_view flags_file) {
  const std::vector<absl::CommandLineFlag*> known = flagsOf(flags_file);
  for (absl::CommandLineFlag* flag : known) {
    std::string ignored;  // absl checks at start-up that every default parses back
    flag->ParseFrom(flag->DefaultValue(), &ignored);
  }
  auto find = [&](absl::string_view name) -> absl::CommandLineFlag* {
    const std::string declared = declaredName(name);
    for (absl::CommandLineFlag* flag : known) {
      if (flag->Name() == declared) return flag;
    }
    return nullptr;
  };
  CommandLine out;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      out.positional.insert(out.positional.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (!absl::ConsumePrefix(&arg, "--") || arg.empty()) {
      out.positional.emplace_back(args[i]);
      continue;
    }
    absl::string_view name = arg;
    std::optional<absl::string_view> value;
    if (const size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    absl::CommandLineFlag* flag = find(name);
    bool negated = false;
    if (flag == nullptr && !value && absl::StartsWith(name, "no")) {
      flag = find(name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    if (!value) {
      if (flag->IsOfType<bool>()) {
        value = negated ? "false" : "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      // absl's text is "Illegal value 'v' specified for flag 'x'[; reason]".
      const size_t reason = error.find("; ");
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, ": illegal value '", *value, "'",
                       reason == std::string::npos ? "" : error.substr(reason)));
    }
  }
  return out;
}

std::string flagsHelp(std::string_view header, std::string_view flags_file) {
  const std::vector<absl::CommandLineFlag*> flags = flagsOf(flags_file);
  size_t width = 0;
  for (const auto* flag : flags) width = std::max(width, flag->Name().size());

  std::string out = absl::StrCat(std::string(header), "flags:\n");
  for (const auto* flag : flags) {
    std::string value = flag->DefaultValue();
    if (flag->IsOfType<std::string>()) {
      value = absl::StrCat("\"", value, "\"");
    } else if (value.empty()) {
      value = "none";
    }
    // "  --name" padded to the description's column; the description and
    // default wrapped at kLineWidth under that column.
    const size_t column = width + 6;
    absl::StrAppend(&out, "  --", shownName(flag->Name()),
                    std::string(column - 4 - flag->Name().size(), ' '));
    size_t used = column;
    const std::string help = flag->Help();
    std::vector<std::string> words = absl::StrSplit(help, ' ', absl::SkipEmpty());
    words.push_back(absl::StrCat("(default: ", value, ")"));  // kept on one line
    for (const std::string& word : words) {
      if (used > column && used + 1 + word.size() > kLineWidth) {
        absl::StrAppend(&out, "\n", std::string(column, ' '));
        used = column;
      } else if (used > column) {
        out += ' ';
        ++used;
      }
      absl::StrAppend(&out, word);
      used += word.size();
    }
    out += '\n';
  }
  return out;
}

}  // namespace syncwrite::server
