#pragma once
// Python's operators on template values: arithmetic with int/float promotion (`/` true division,
// `//` and `%` flooring), `~` concatenation as text, comparisons, `in`, string and list repetition,
// and slicing.
#include <optional>
#include <string_view>

#include "template/value.h"

namespace ridge::tmpl {

Value binary_op(std::string_view op, const Value& left, const Value& right);
Value unary_minus_plus(std::string_view op, const Value& v);
bool contains(const Value& container, const Value& item);
Value slice_value(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop,
                  std::optional<int64_t> step);

}  // namespace ridge::tmpl
