#pragma once
// A Jinja chat template, parsed once (at model load: unsupported features fail here) and rendered
// per request with a context of values (messages, tools, add_generation_prompt, bos_token, ...).
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "template/ast.h"
#include "template/interpreter.h"
#include "template/parser.h"
#include "template/value.h"

namespace ridge::tmpl {

struct RenderOptions {
  RenderLimits limits;
  std::time_t now = 0;  // strftime_now's clock; 0: the current time
};

class Template {
 public:
  // Error naming the unsupported feature (or syntax error) and its line.
  explicit Template(std::string_view source, const ParseLimits& limits = {});
  // `context` maps names to values (a dict Value). Error (ridge::Error) for what the template raises
  // (raise_exception), undefined values it uses, and limits it passes.
  std::string render(const Value& context, const RenderOptions& options = {}) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const ParsedTemplate> parsed_;
};

// JSON as template values: objects keep their key order; integers stay integers.
Value from_json(const nlohmann::ordered_json& json);

}  // namespace ridge::tmpl
