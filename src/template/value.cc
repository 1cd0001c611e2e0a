#include "template/value.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.h"
#include "template/text.h"

namespace ridge::tmpl {

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : items)
    if (equals(k, key)) return &v;
  return nullptr;
}

Value* Dict::find(const Value& key) {
  for (auto& [k, v] : items)
    if (equals(k, key)) return &v;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  if (Value* slot = find(key)) {
    *slot = std::move(value);
  } else {
    items.emplace_back(std::move(key), std::move(value));
  }
}

Value Value::list(std::vector<Value> items, bool tuple) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->tuple = tuple;
  return Value(std::move(l));
}

Value Value::generator(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.as_list().generator = true;
  return v;
}

Value Value::dict() { return Value(std::make_shared<Dict>()); }

Value Value::function(std::string name, std::function<Value(CallArgs&, Interpreter&)> call) {
  return Value(std::make_shared<Callable>(Callable{std::move(name), std::move(call)}));
}

double Value::to_double() const {
  if (is_float()) return as_float();
  if (is_int()) return double(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  fail("template: expected a number, got {}", type_name());
}

bool Value::truthy() const {
  if (is_undefined() || is_none()) return false;
  if (is_bool()) return as_bool();
  if (is_int()) return as_int() != 0;
  if (is_float()) return as_float() != 0.0;
  if (is_string()) return !as_string().empty();
  if (is_list()) return as_list().generator || !as_list().items.empty();
  if (is_dict()) return as_dict().namespace_object || !as_dict().items.empty();
  return true;
}

std::string Value::type_name() const {
  if (is_undefined()) return "undefined";
  if (is_none()) return "NoneType";
  if (is_bool()) return "bool";
  if (is_int()) return "int";
  if (is_float()) return "float";
  if (is_string()) return "str";
  if (is_list()) return as_list().generator ? "generator" : as_list().tuple ? "tuple" : "list";
  if (is_dict()) return as_dict().namespace_object ? "Namespace" : "dict";
  return "function";
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: plain between 1e-4 and 1e16, else an exponent.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(size_t(-exponent - 1), '0') + digits;
    return out;
  }
  const size_t int_digits = size_t(exponent) + 1;
  if (digits.size() <= int_digits) {
    out += digits + std::string(int_digits - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
  }
  return out;
}

namespace {

std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == quote) {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += char(c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string to_repr(const Value& v) {
  if (v.is_undefined()) return "Undefined";  // jinja2's Undefined.__repr__
  if (v.is_string()) return string_repr(v.as_string());
  if (v.is_list()) {
    const List& l = v.as_list();
    if (l.generator) return "<generator object>";
    std::string out = l.tuple ? "(" : "[";
    for (size_t i = 0; i < l.items.size(); ++i) {
      if (i) out += ", ";
      out += to_repr(l.items[i]);
    }
    if (l.tuple && l.items.size() == 1) out += ",";
    out += l.tuple ? ")" : "]";
    return out;
  }
  if (v.is_dict()) {
    const Dict& d = v.as_dict();
    std::string out = d.namespace_object ? "<Namespace {" : "{";
    bool first = true;
    for (const auto& [k, item] : d.items) {
      if (!first) out += ", ";
      first = false;
      out += to_repr(k) + ": " + to_repr(item);
    }
    out += d.namespace_object ? "}>" : "}";
    return out;
  }
  return to_str(v);
}

std::string to_str(const Value& v) {
  if (v.is_undefined()) return "";
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.as_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_float()) return float_repr(v.as_float());
  if (v.is_string()) return v.as_string();
  if (v.is_callable()) return fmt::format("<function {}>", v.as_callable().name);
  return to_repr(v);
}

bool equals(const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x == y;
  }
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    if (x.size() != y.size() || a.as_list().tuple != b.as_list().tuple) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equals(x[i], y[i])) return false;
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const Dict& x = a.as_dict();
    const Dict& y = b.as_dict();
    if (x.namespace_object || y.namespace_object) return &x == &y;
    if (x.items.size() != y.items.size()) return false;
    for (const auto& [k, item] : x.items) {
      const Value* other = y.find(k);
      if (!other || !equals(item, *other)) return false;
    }
    return true;
  }
  if (a.is_callable() && b.is_callable()) return &a.as_callable() == &b.as_callable();
  return false;
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() < b.to_double();
    return (a.is_bool() ? a.as_bool() : a.as_int()) < (b.is_bool() ? b.as_bool() : b.as_int());
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order is code point order
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  fail("template: '<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name());
}

std::vector<Value> iterate(const Value& v) {
  if (v.is_undefined()) return {};
  if (v.is_list()) return v.as_list().items;
  if (v.is_dict()) {
    std::vector<Value> keys;
    for (const auto& [k, item] : v.as_dict().items) keys.push_back(k);
    return keys;
  }
  if (v.is_string()) {
    std::vector<Value> chars;
    for (auto& c : utf8_chars(v.as_string())) chars.emplace_back(std::move(c));
    return chars;
  }
  fail("template: '{}' object is not iterable", v.type_name());
}

}  // namespace ridge::tmpl
