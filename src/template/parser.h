#pragma once
// Parsing a chat template (jinja2's grammar, the subset chat templates use) into statements.
// Everything outside the subset -- `extends`, `include`, `import`, `block`, `call`, `with`, unknown
// filters and tests -- fails here, at load, with an error naming the feature and its line.
#include <string_view>

#include "template/ast.h"

namespace ridge::tmpl {

struct ParseLimits {
  int max_depth = 200;  // nested blocks and expressions
};

ParsedTemplate parse_template(std::string_view source, const ParseLimits& limits = {});

}  // namespace ridge::tmpl
