#pragma once
// Reading a filter's, method's or global's arguments by position or keyword, as Python binds them.
#include <string_view>

#include "core/error.h"
#include "template/value.h"

namespace ridge::tmpl {

// The argument at `index` (counting after the filtered value) or named `name`; `fallback` if absent.
inline Value arg(const CallArgs& args, size_t index, std::string_view name, Value fallback = Value()) {
  for (const auto& [key, value] : args.named)
    if (key == name) return value;
  if (index < args.positional.size()) return args.positional[index];
  return fallback;
}

inline int64_t int_arg(const CallArgs& args, size_t index, std::string_view name, int64_t fallback) {
  const Value v = arg(args, index, name);
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  fail("template: argument '{}' must be an integer, got {}", name, v.type_name());
}

inline bool bool_arg(const CallArgs& args, size_t index, std::string_view name, bool fallback) {
  const Value v = arg(args, index, name);
  return v.is_undefined() ? fallback : v.truthy();
}

}  // namespace ridge::tmpl
