#pragma once
// Rendering a template source with a JSON context, for the template tests.
#include <string>

#include <nlohmann/json.hpp>

#include "template/template.h"

namespace ridge::tmpl::testing {

inline std::string render(const std::string& source, const std::string& context_json = "{}",
                          const RenderOptions& options = {}) {
  const Template t(source);
  RenderOptions opt = options;
  if (opt.now == 0) opt.now = 1764547200;  // 2025-12-01 00:00:00 UTC
  return t.render(from_json(nlohmann::ordered_json::parse(context_json)), opt);
}

}  // namespace ridge::tmpl::testing
