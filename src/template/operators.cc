#include "template/operators.h"

#include <cmath>

#include "core/error.h"
#include "template/builtins.h"
#include "template/interpreter.h"
#include "template/text.h"

namespace ridge::tmpl {
namespace {

// Strings and lists built by repetition stop here, before memory runs out; the interpreter's
// output cap catches anything smaller that still grows too much.
constexpr int64_t kMaxRepeat = int64_t(1) << 26;

int64_t int_of(const Value& v) { return v.is_bool() ? int64_t(v.as_bool()) : v.as_int(); }
bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  fail("template: unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name());
}

// Python's ints do not overflow; ridge's stop with an error instead of wrapping.
int64_t checked_op(char op, int64_t x, int64_t y) {
  int64_t r = 0;
  const bool overflow = op == '+'   ? __builtin_add_overflow(x, y, &r)
                        : op == '-' ? __builtin_sub_overflow(x, y, &r)
                                    : __builtin_mul_overflow(x, y, &r);
  if (overflow) fail("template: integer overflow");
  return r;
}

Value repeat(const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    if (int64_t(seq.as_string().size()) * n > kMaxRepeat) fail("template: string repetition too large");
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  const auto& items = seq.as_list().items;
  if (int64_t(items.size()) * n > kMaxRepeat) fail("template: list repetition too large");
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.as_list().tuple);
}

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  if (op == "/") {
    if (b.to_double() == 0) fail("template: division by zero");
    return a.to_double() / b.to_double();
  }
  if (is_integral(a) && is_integral(b)) {
    const int64_t x = int_of(a), y = int_of(b);
    if (op == "+" || op == "-" || op == "*") return checked_op(op[0], x, y);
    if (op == "//" || op == "%") {
      if (y == 0) fail("template: integer division or modulo by zero");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return op == "//" ? q : m;
    }
    if (op == "**") {
      if (y < 0) return std::pow(double(x), double(y));
      int64_t result = 1;
      for (int64_t i = 0; i < y; ++i) {
        if (__builtin_mul_overflow(result, x, &result)) fail("template: integer overflow");
        if (result == 0 || result == 1) break;
      }
      return result;
    }
  }
  const double x = a.to_double(), y = b.to_double();
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if (op == "**") return std::pow(x, y);
  if (y == 0) fail("template: float division by zero");
  if (op == "//") return std::floor(x / y);
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return m;
}

}  // namespace

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) fail("template: 'in <string>' requires string as left operand, not {}", item.type_name());
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_dict()) return container.as_dict().find(item) != nullptr;
  if (container.is_list()) {
    for (const auto& v : container.as_list().items)
      if (equals(v, item)) return true;
    return false;
  }
  if (container.is_undefined()) return false;
  fail("template: argument of type '{}' is not iterable", container.type_name());
}

Value binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value(to_str(a) + to_str(b));
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    if (op == "<") return less_than(a, b);
    if (op == ">") return less_than(b, a);
    if (op == "<=") return !less_than(b, a);
    return !less_than(a, b);
  }
  if (op == "+") {
    if (a.is_string() && b.is_string() && (a.is_markup() || b.is_markup()))
      return Value(escape_markup(a).as_string() + escape_markup(b).as_string()).as_markup();
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list() && a.as_list().tuple == b.as_list().tuple) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      return Value::list(std::move(items), a.as_list().tuple);
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && is_integral(b)) return repeat(a, int_of(b));
    if ((b.is_string() || b.is_list()) && is_integral(a)) return repeat(b, int_of(a));
  }
  if (op == "%" && a.is_string()) return Value(percent_format(a.as_string(), b));
  return arithmetic(op, a, b);
}

Value unary_minus_plus(std::string_view op, const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_number()) fail("template: bad operand type for unary {}: '{}'", op, v.type_name());
  if (op == "+") return v.is_bool() ? Value(int_of(v)) : v;
  if (v.is_float()) return -v.as_float();
  return checked_op('-', 0, int_of(v));
}

Value slice_value(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop,
                  std::optional<int64_t> step) {
  std::vector<Value> items;
  std::vector<std::string> chars;
  int64_t n = 0;
  if (object.is_string()) {
    chars = utf8_chars(object.as_string());
    n = int64_t(chars.size());
  } else if (object.is_list()) {
    n = int64_t(object.as_list().items.size());
  } else {
    fail("template: '{}' object is not subscriptable", object.type_name());
  }
  const int64_t st = step.value_or(1);
  if (st == 0) fail("template: slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + n : *v;
    if (st > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t begin = clamp(start, st > 0 ? 0 : n - 1);
  const int64_t end = clamp(stop, st > 0 ? n : -1);
  std::string text;
  for (int64_t i = begin; st > 0 ? i < end : i > end; i += st) {
    if (object.is_string()) {
      text += chars[size_t(i)];
    } else {
      items.push_back(object.as_list().items[size_t(i)]);
    }
  }
  if (object.is_string()) return Value(std::move(text));
  return Value::list(std::move(items), object.as_list().tuple);
}

}  // namespace ridge::tmpl
