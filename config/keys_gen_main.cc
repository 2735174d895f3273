// syncwrite-config-keys SCHEMA_JSON OUTPUT_HEADER: writes config/keys.h (see
// config/keys_header.h) for the schema in SCHEMA_JSON. The build runs it
// whenever the schema changes. OUTPUT_HEADER is rewritten only when its text
// changes, so that an unchanged schema recompiles nothing.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "config/keys_header.h"
#include "config/schema.h"

namespace {

std::optional<std::string> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: syncwrite-config-keys SCHEMA_JSON OUTPUT_HEADER\n";
    return 2;
  }
  const std::optional<std::string> schema_text = readFile(argv[1]);
  if (!schema_text) {
    std::cerr << "syncwrite-config-keys: cannot read " << argv[1] << "\n";
    return 1;
  }
  const auto schema = syncwrite::config::Schema::parse(*schema_text);
  if (!schema.ok()) {
    std::cerr << argv[1] << ": " << schema.status().message() << "\n";
    return 1;
  }
  const auto header = syncwrite::config::renderKeysHeader(*schema);
  if (!header.ok()) {
    std::cerr << argv[1] << ": " << header.status().message() << "\n";
    return 1;
  }
  if (readFile(argv[2]) == *header) return 0;
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << *header;
  out.flush();
  if (!out) {
    std::cerr << "syncwrite-config-keys: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
