// syncwrite-config-doc: prints docs/configuration.md, generated from the
// compiled-in config/schema.json. Used by `./dev docs`.
#include <iostream>

#include "config/schema.h"
#include "config/schema_doc.h"

int main() {
  std::cout << syncwrite::config::renderConfigurationMarkdown(syncwrite::config::Schema::builtin());
  return 0;
}
