#pragma once
// The values a chat template computes with, shaped like the Python objects jinja2 hands around:
// undefined, None, bools, ints, floats, strings, lists (and tuples), dicts (insertion-ordered, also
// jinja2's namespace()) and callables (macros, globals, bound string/dict methods). Lists and dicts
// are shared by reference as in Python; strings print and compare as Python's do.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ridge::tmpl {

class Value;
struct Interpreter;

struct Undefined {
  std::string name;  // what was looked up, for the error when it is used
};
struct None {};

struct List {
  std::vector<Value> items;
  bool tuple = false;  // prints as (a, b)
  // What jinja2's map / select / ... return: a generator, always true, with no len(), not
  // subscriptable, not JSON; templates turn it into a list with `|list`.
  bool generator = false;
};

struct Dict {
  std::vector<std::pair<Value, Value>> items;
  bool namespace_object = false;  // jinja2's namespace(): attributes may be assigned
  const Value* find(const Value& key) const;
  Value* find(const Value& key);
  void set(Value key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};

struct Callable {
  std::string name;
  std::function<Value(CallArgs&, Interpreter&)> call;
};

class Value {
 public:
  using Storage = std::variant<Undefined, None, bool, int64_t, double, std::string, std::shared_ptr<List>,
                               std::shared_ptr<Dict>, std::shared_ptr<Callable>>;

  Value() : data_(Undefined{}) {}
  Value(None) : data_(None{}) {}
  Value(bool b) : data_(b) {}
  Value(int v) : data_(int64_t(v)) {}
  Value(int64_t v) : data_(v) {}
  Value(double v) : data_(v) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(std::shared_ptr<List> l) : data_(std::move(l)) {}
  Value(std::shared_ptr<Dict> d) : data_(std::move(d)) {}
  Value(std::shared_ptr<Callable> c) : data_(std::move(c)) {}

  static Value undefined(std::string name) { return Value(Storage(Undefined{std::move(name)})); }
  static Value list(std::vector<Value> items = {}, bool tuple = false);
  static Value generator(std::vector<Value> items);
  static Value dict();
  static Value function(std::string name, std::function<Value(CallArgs&, Interpreter&)> call);

  bool is_undefined() const { return std::holds_alternative<Undefined>(data_); }
  bool is_none() const { return std::holds_alternative<None>(data_); }
  bool is_bool() const { return std::holds_alternative<bool>(data_); }
  bool is_int() const { return std::holds_alternative<int64_t>(data_); }
  bool is_float() const { return std::holds_alternative<double>(data_); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return std::holds_alternative<std::string>(data_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<List>>(data_); }
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<Dict>>(data_); }
  bool is_callable() const { return std::holds_alternative<std::shared_ptr<Callable>>(data_); }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // Ints, bools and floats as a double (arithmetic on mixed operands).
  double to_double() const;
  const std::string& as_string() const { return std::get<std::string>(data_); }
  List& as_list() const { return *std::get<std::shared_ptr<List>>(data_); }
  Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  Callable& as_callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }
  const std::string& undefined_name() const { return std::get<Undefined>(data_).name; }

  // jinja2's Markup (from `safe` and `escape`): `+` with a plain string escapes the plain one.
  bool is_markup() const { return markup_ && is_string(); }
  Value as_markup() const {
    Value v = *this;
    v.markup_ = true;
    return v;
  }

  // Python's bool(x); undefined is false.
  bool truthy() const;
  // Python's type name as error messages print it ("str", "dict object", ...).
  std::string type_name() const;

 private:
  explicit Value(Storage s) : data_(std::move(s)) {}
  Storage data_;
  bool markup_ = false;
};

// Python's str(x) (undefined prints nothing) and repr(x).
std::string to_str(const Value& v);
std::string to_repr(const Value& v);
// Python's repr of a float: the shortest text that reads back, "1.0", "1e+16", "inf".
std::string float_repr(double v);
// Python's ==; ints, floats and bools compare by value, undefined equals only undefined.
bool equals(const Value& a, const Value& b);
// Python's <, for numbers, strings and lists; error for other pairs.
bool less_than(const Value& a, const Value& b);
// The items `for` walks: a list's items, a dict's keys, a string's characters; undefined is empty.
std::vector<Value> iterate(const Value& v);

}  // namespace ridge::tmpl
