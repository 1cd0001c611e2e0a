// jinja2's tests (`x is defined`, `x is string`, `n is divisibleby 3`, ...).
#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "template/args.h"
#include "template/builtins.h"
#include "template/operators.h"
#include "template/text.h"

namespace ridge::tmpl {
namespace {

using Test = std::function<bool(const Value&, CallArgs&)>;

Value first_arg(CallArgs& args, std::string_view test) {
  if (args.positional.empty()) fail("template: test '{}' needs an argument", test);
  return args.positional[0];
}

int64_t integral(const Value& v, std::string_view test) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  if (v.is_undefined()) fail_undefined(v);
  fail("template: test '{}' needs an integer, got {}", test, v.type_name());
}

const std::unordered_map<std::string, Test>& tests() {
  static const std::unordered_map<std::string, Test> table = {
      {"defined", [](const Value& v, CallArgs&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, CallArgs&) { return v.is_undefined(); }},
      {"none", [](const Value& v, CallArgs&) { return v.is_none(); }},
      {"string", [](const Value& v, CallArgs&) { return v.is_string(); }},
      {"number", [](const Value& v, CallArgs&) { return v.is_number(); }},
      {"integer", [](const Value& v, CallArgs&) { return v.is_int(); }},
      {"float", [](const Value& v, CallArgs&) { return v.is_float(); }},
      {"boolean", [](const Value& v, CallArgs&) { return v.is_bool(); }},
      {"true", [](const Value& v, CallArgs&) { return v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, CallArgs&) { return v.is_bool() && !v.as_bool(); }},
      {"mapping", [](const Value& v, CallArgs&) { return v.is_dict() && !v.as_dict().namespace_object; }},
      {"iterable",
       [](const Value& v, CallArgs&) { return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict(); }},
      {"sequence",
       [](const Value& v, CallArgs&) { return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict(); }},
      {"callable", [](const Value& v, CallArgs&) { return v.is_callable(); }},
      {"even", [](const Value& v, CallArgs&) { return integral(v, "even") % 2 == 0; }},
      {"odd", [](const Value& v, CallArgs&) { return integral(v, "odd") % 2 != 0; }},
      {"divisibleby",
       [](const Value& v, CallArgs& a) {
         const int64_t d = integral(first_arg(a, "divisibleby"), "divisibleby");
         if (d == 0) fail("template: divisibleby 0");
         return integral(v, "divisibleby") % d == 0;
       }},
      {"lower", [](const Value& v, CallArgs&) { return v.is_string() && to_lower(v.as_string()) == v.as_string(); }},
      {"upper", [](const Value& v, CallArgs&) { return v.is_string() && to_upper(v.as_string()) == v.as_string(); }},
      {"in", [](const Value& v, CallArgs& a) { return contains(first_arg(a, "in"), v); }},
      {"sameas",
       [](const Value& v, CallArgs& a) {
         const Value other = first_arg(a, "sameas");
         if (v.is_none() || other.is_none() || v.is_bool() || other.is_bool()) return equals(v, other) &&
                                                                                       v.type_name() == other.type_name();
         if (v.is_list() && other.is_list()) return &v.as_list() == &other.as_list();
         if (v.is_dict() && other.is_dict()) return &v.as_dict() == &other.as_dict();
         return false;
       }},
  };
  return table;
}

bool compare_test(std::string_view name, const Value& v, CallArgs& args, bool& known) {
  static const std::unordered_map<std::string, std::string> ops = {
      {"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="}, {"lt", "<"},   {"lessthan", "<"},
      {"<", "<"},   {"le", "<="},      {"<=", "<="}, {"gt", ">"},  {">", ">"},   {"greaterthan", ">"},
      {"ge", ">="}, {">=", ">="}};
  const auto it = ops.find(std::string(name));
  known = it != ops.end();
  if (!known) return false;
  return binary_op(it->second, v, first_arg(args, name)).truthy();
}

}  // namespace

bool has_test(std::string_view name) {
  if (tests().count(std::string(name))) return true;
  static const std::vector<std::string_view> kCompare = {"eq", "equalto", "ne", "lt", "lessthan", "le", "gt",
                                                         "greaterthan", "ge", "filter", "test", "escaped"};
  return std::find(kCompare.begin(), kCompare.end(), name) != kCompare.end();
}

bool apply_test(std::string_view name, const Value& value, CallArgs& args, Interpreter& interp) {
  (void)interp;
  const auto it = tests().find(std::string(name));
  if (it != tests().end()) return it->second(value, args);
  if (name == "filter") return has_filter(to_str(first_arg(args, name)));
  if (name == "test") return has_test(to_str(first_arg(args, name)));
  if (name == "escaped") return false;
  bool known = false;
  const bool result = compare_test(name, value, args, known);
  if (!known) fail("template: no test named '{}'", name);
  return result;
}

}  // namespace ridge::tmpl
