#include "config/keys_header.h"

#include <cctype>
#include <set>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

namespace syncwrite::config {

namespace {

std::string cppType(const KeySpec& k, const std::string& enum_name) {
  switch (k.type) {
    case ValueType::kBool:
      return "bool";
    case ValueType::kUnsigned:
      return "uint64_t";
    case ValueType::kDurationMs:
      return "std::chrono::milliseconds";
    case ValueType::kString:
      return "std::string";
    case ValueType::kEnum:
      return enum_name;
  }
  return "?";
}

std::string scopeName(Scope s) { return s == Scope::kServer ? "Scope::kServer" : "Scope::kBucket"; }

// `text` as comment lines of at most `width` columns, each starting "// ".
std::string commentLines(std::string_view text, size_t width = 100) {
  std::string out;
  std::string line = "//";
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!word.empty()) {
      if (line.size() > 2 && line.size() + 1 + word.size() > width) {
        absl::StrAppend(&out, line, "\n");
        line = "//";
      }
      absl::StrAppend(&line, " ", std::string(word));
    }
    start = end + 1;
  }
  absl::StrAppend(&out, line, "\n");
  return out;
}

// A C++ string literal of `s` (schema names and values need no escapes but
// quotes and backslashes, which cppNameOf already refuses for them).
std::string literal(std::string_view s) { return absl::StrCat("\"", std::string(s), "\""); }

}  // namespace

std::optional<std::string> cppNameOf(std::string_view spelling) {
  std::string out;
  bool upper_next = true;
  for (char c : spelling) {
    if (c == '_' || c == '-') {
      if (upper_next) return std::nullopt;  // leading or doubled separator
      upper_next = true;
      continue;
    }
    if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
    if (out.empty() && !std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
    out += upper_next ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper_next = false;
  }
  if (out.empty() || upper_next) return std::nullopt;  // empty, or a trailing separator
  return out;
}

absl::StatusOr<std::string> renderKeysHeader(const Schema& schema) {
  std::string enums;
  std::string keys;
  std::string all;
  std::set<std::string> key_names;
  for (const KeySpec& k : schema.keys()) {
    const std::optional<std::string> name = cppNameOf(k.name);
    if (!name) {
      return absl::InvalidArgumentError(
          absl::StrCat("schema key \"", k.name, "\": not a C++ name once '_' and '-' are dropped"));
    }
    if (!key_names.insert(*name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("schema key \"", k.name, "\": another key is also named k", *name));
    }
    if (k.type == ValueType::kEnum) {
      absl::StrAppend(&enums, "// The values of ", k.name, ", in schema order.\n", "enum class ",
                      *name, " : uint8_t {\n");
      std::set<std::string> enumerators;
      std::vector<std::string> spellings;
      for (const std::string& v : k.values) {
        const std::optional<std::string> enumerator = cppNameOf(v);
        if (!enumerator || !enumerators.insert(*enumerator).second) {
          return absl::InvalidArgumentError(
              absl::StrCat("schema key \"", k.name, "\": value \"", v,
                           enumerator ? "\" has the same C++ name as another value"
                                      : "\" is not a C++ name once '_' and '-' are dropped"));
        }
        absl::StrAppend(&enums, "  k", *enumerator, ",  // ", literal(v), "\n");
        spellings.push_back(literal(v));
      }
      absl::StrAppend(&enums, "};\n", "template <>\nstruct EnumSpellings<", *name, "> {\n",
                      "  static constexpr std::array<std::string_view, ", k.values.size(),
                      "> kValues{\n      ", absl::StrJoin(spellings, ", "), "};\n};\n\n");
    }
    std::string bounds;
    if (k.min || k.max) {
      bounds = absl::StrCat(", ", k.min ? absl::StrCat(*k.min) : "", "..",
                            k.max ? absl::StrCat(*k.max) : "");
    }
    absl::StrAppend(&keys, "// ", k.name, " (", toString(k.scope), ", ", toString(k.type), bounds,
                    ", default ", k.default_value.dump(), k.dynamic ? ", dynamic" : "", ")\n",
                    commentLines(k.description), "inline constexpr Key<", cppType(k, *name), "> k",
                    *name, "{\n    ", literal(k.name), ", ", scopeName(k.scope), "};\n\n");
    absl::StrAppend(&all, "    KeyDeclaration{", literal(k.name), ", ValueType::k",
                    *cppNameOf(toString(k.type)), ", ", scopeName(k.scope), "},\n");
  }
  return absl::StrCat(
      "// Generated from config/schema.json by syncwrite-config-keys at build time. Do not edit;\n"
      "// change the schema. See config/key.h.\n"
      "#pragma once\n\n"
      "#include <array>\n#include <chrono>\n#include <cstdint>\n#include <string>\n"
      "#include <string_view>\n\n"
      "#include \"config/key.h\"\n#include \"config/schema.h\"\n\n"
      "namespace syncwrite::config {\n\n",
      enums,
      "namespace keys {\n\n"
      "// Every key the schema declares, in schema order.\n"
      "inline constexpr std::array<KeyDeclaration, ",
      schema.keys().size(), "> kAll{{\n", all,
      "}};\n\n"
      "}  // namespace keys\n\n"
      "consteval bool isDeclaredKey(std::string_view name, ValueType type, Scope scope) {\n"
      "  for (const KeyDeclaration& k : keys::kAll) {\n"
      "    if (k.name == name && k.type == type && k.scope == scope) return true;\n"
      "  }\n"
      "  return false;\n"
      "}\n\n"
      "namespace keys {\n\n",
      keys,
      "}  // namespace keys\n\n"
      "}  // namespace syncwrite::config\n");
}

}  // namespace syncwrite::config
