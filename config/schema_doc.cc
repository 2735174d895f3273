#include "config/schema_doc.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

namespace syncwrite::config {

namespace {

std::string typeCell(const KeySpec& k) {
  switch (k.type) {
    case ValueType::kBool:
      return "bool";
    case ValueType::kUnsigned:
      return "unsigned integer";
    case ValueType::kDurationMs:
      return "duration (ms)";
    case ValueType::kString:
      return "string";
    case ValueType::kEnum:
      return "enum";
  }
  return "?";
}

std::string allowedCell(const KeySpec& k) {
  switch (k.type) {
    case ValueType::kUnsigned:
    case ValueType::kDurationMs:
      if (k.min && k.max) return absl::StrCat(*k.min, "–", *k.max);
      if (k.min) return absl::StrCat("≥ ", *k.min);
      if (k.max) return absl::StrCat("≤ ", *k.max);
      return "any";
    case ValueType::kEnum: {
      std::vector<std::string> quoted;
      for (const auto& v : k.values) quoted.push_back(absl::StrCat("`", v, "`"));
      return absl::StrJoin(quoted, ", ");
    }
    case ValueType::kBool:
      return "`true`, `false`";
    case ValueType::kString:
      return "any";
  }
  return "?";
}

std::string defaultCell(const KeySpec& k) {
  if (k.default_value.is_string())
    return absl::StrCat("`", k.default_value.get<std::string>(), "`");
  return absl::StrCat("`", k.default_value.dump(), "`");
}

void renderScope(std::string& out, const Schema& schema, Scope scope, const char* title,
                 const char* intro) {
  absl::StrAppend(&out, "## ", title, "\n\n", intro, "\n\n",
                  "| key | type | default | allowed | dynamic | description |\n",
                  "|---|---|---|---|---|---|\n");
  for (const auto& k : schema.keys()) {
    if (k.scope != scope) continue;
    absl::StrAppend(&out, "| `", k.name, "` | ", typeCell(k), " | ", defaultCell(k), " | ",
                    allowedCell(k), " | ", k.dynamic ? "yes" : "no", " | ", k.description, " |\n");
  }
  out += "\n";
}

}  // namespace

std::string renderConfigurationMarkdown(const Schema& schema) {
  std::string out =
      "# Configuration\n\n"
      "<!-- Generated from config/schema.json by `./dev docs`; do not edit. "
      "A test fails when this file is stale. -->\n\n"
      "Every key syncwrite accepts. Values are JSON: durations are whole milliseconds, enums are "
      "strings. A key marked dynamic can be changed on a live server (SET_PARAM, or "
      "`Configuration::set`); the others are read at start-up only. A refused value — unknown "
      "key, wrong type, out of range, not one of the allowed values — changes nothing, and the "
      "error names the key, the value and what was expected.\n\n";
  renderScope(out, schema, Scope::kServer, "Server keys", "One value for the whole process.");
  renderScope(out, schema, Scope::kBucket, "Bucket keys", "Set per bucket.");
  return out;
}

}  // namespace syncwrite::config
