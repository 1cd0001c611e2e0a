// jinja2's built-in filters, with the semantics of jinja2 3.1 (and transformers' `tojson`).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "template/args.h"
#include "template/builtins.h"
#include "template/text.h"

namespace ridge::tmpl {
namespace {

using Filter = std::function<Value(const Value&, CallArgs&, Interpreter&)>;

// jinja2's environment.getitem over a dotted path ("function.name", "0.x"): items, then attributes.
Value get_path(const Value& object, const std::string& path, Interpreter& interp) {
  Value v = object;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (v.is_undefined()) fail_undefined(v);
    Value key(part);
    int64_t index = 0;
    const auto parsed = std::from_chars(part.data(), part.data() + part.size(), index);
    if (!part.empty() && parsed.ec == std::errc() && parsed.ptr == part.data() + part.size()) key = Value(index);
    if (v.is_dict()) {
      const Value* found = v.as_dict().find(key);
      v = found ? *found : Value::undefined(fmt::format("'{} object' has no attribute '{}'", v.type_name(), part));
    } else if (v.is_list() && key.is_int()) {
      const auto& items = v.as_list().items;
      const int64_t i = key.as_int();
      v = i < int64_t(items.size()) ? items[size_t(i)] : Value::undefined("index out of range");
    } else {
      Value m = method_of(v, part);
      v = m.is_undefined() ? Value::undefined(fmt::format("'{} object' has no attribute '{}'", v.type_name(), part))
                           : m;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  (void)interp;
  return v;
}

std::string text_of(const Value& v) { return to_str(v); }

int64_t length_of(const Value& v) {
  if (v.is_undefined()) return 0;
  if (v.is_string()) return int64_t(utf8_length(v.as_string()));
  if (v.is_list() && !v.as_list().generator) return int64_t(v.as_list().items.size());
  if (v.is_dict()) return int64_t(v.as_dict().items.size());
  fail("template: object of type '{}' has no len()", v.type_name());
}

// Sort key of case-insensitive filters: strings lowercased.
Value fold(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(to_lower(v.as_string()));
  return v;
}

Value items_of(const Value& v, bool generator = false) {
  if (v.is_undefined()) return generator ? Value::generator({}) : Value::list();
  if (!v.is_dict()) fail("template: can only get item pairs from a mapping, not {}", v.type_name());
  std::vector<Value> pairs;
  for (const auto& [k, item] : v.as_dict().items) pairs.push_back(Value::list({k, item}, true));
  return generator ? Value::generator(std::move(pairs)) : Value::list(std::move(pairs));
}

Value sort_items(std::vector<Value> items, bool reverse, bool case_sensitive, const std::function<Value(const Value&)>& key) {
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = fold(key(a), case_sensitive), kb = fold(key(b), case_sensitive);
    return reverse ? less_than(kb, ka) : less_than(ka, kb);
  });
  return Value::list(std::move(items));
}

Value min_max(const Value& v, CallArgs& args, Interpreter& interp, bool want_max) {
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  const bool cs = bool_arg(args, 0, "case_sensitive", false);
  const Value attribute = arg(args, 1, "attribute");
  auto key = [&](const Value& x) {
    return fold(attribute.is_undefined() || attribute.is_none() ? x : get_path(x, to_str(attribute), interp), cs);
  };
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    const bool better = want_max ? less_than(key(best), key(items[i])) : less_than(key(items[i]), key(best));
    if (better) best = items[i];
  }
  return best;
}

// Python's round(x, ndigits): halves go to the even neighbour.
double python_round(double x, int64_t digits) {
  const double scale = std::pow(10.0, double(digits));
  const double y = x * scale;
  double r = std::nearbyint(y);  // the default rounding mode is to nearest, ties to even
  return r / scale;
}

Value do_round(const Value& v, CallArgs& args, Interpreter&) {
  const int64_t precision = int_arg(args, 0, "precision", 0);
  const std::string method = to_str(arg(args, 1, "method", Value("common")));
  if (method != "common" && method != "ceil" && method != "floor")
    fail("template: round: method must be 'common', 'ceil' or 'floor'");
  if (v.is_int() && method == "common") return v;
  const double x = v.to_double();
  if (method == "common") return python_round(x, precision);
  const double scale = std::pow(10.0, double(precision));
  return (method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale)) / scale;
}

Value do_int(const Value& v, CallArgs& args, Interpreter&) {
  const Value fallback = arg(args, 0, "default", Value(int64_t(0)));
  if (v.is_int()) return v;
  if (v.is_bool()) return int64_t(v.as_bool());
  if (v.is_float()) return int64_t(std::trunc(v.as_float()));
  if (v.is_string()) {
    const std::string s = strip(v.as_string(), nullptr, true, true);
    try {
      size_t used = 0;
      const long long i = std::stoll(s, &used, int(int_arg(args, 1, "base", 10)));
      if (used == s.size()) return int64_t(i);
      const double d = std::stod(s, &used);
      if (used == s.size()) return int64_t(std::trunc(d));
    } catch (const std::exception&) {
    }
  }
  return fallback;
}

Value do_float(const Value& v, CallArgs& args, Interpreter&) {
  const Value fallback = arg(args, 0, "default", Value(0.0));
  if (v.is_number()) return v.to_double();
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = strip(v.as_string(), nullptr, true, true);
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return fallback;
}

// jinja2's title: each piece between "-", whitespace and opening brackets gets its first letter
// upper-cased and the rest lower-cased.
std::string jinja_title(const std::string& s) {
  std::string out;
  bool word_start = true;
  for (const auto& ch : utf8_chars(s)) {
    const bool sep = ch == "-" || ch == "(" || ch == "{" || ch == "[" || ch == "<" || is_space_char(ch);
    if (sep) {
      out += ch;
      word_start = true;
    } else {
      out += word_start ? to_upper(ch) : to_lower(ch);
      word_start = false;
    }
  }
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  const auto chars = utf8_chars(s);
  for (size_t i = 0; i < chars.size(); ++i) {
    const std::string& c = chars[i];
    if (c == "\n" || c == "\r" || c == "\v" || c == "\f" || c == "\x1c" || c == "\x1d" || c == "\x1e" ||
        c == "\xc2\x85" || c == "\xe2\x80\xa8" || c == "\xe2\x80\xa9") {
      if (c == "\r" && i + 1 < chars.size() && chars[i + 1] == "\n") ++i;
      lines.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

Value do_indent(const Value& v, CallArgs& args, Interpreter&) {
  const Value width = arg(args, 0, "width", Value(int64_t(4)));
  const std::string pad = width.is_string() ? width.as_string() : std::string(size_t(std::max<int64_t>(0, width.as_int())), ' ');
  const bool first = bool_arg(args, 1, "first", false);
  const bool blank = bool_arg(args, 2, "blank", false);
  const auto lines = split_lines(text_of(v) + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\n";
    if ((i > 0 || first) && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
  }
  return Value(std::move(out));
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value escape_markup(const Value& v) {
  if (v.is_markup()) return v;
  return Value(html_escape(to_str(v))).as_markup();
}

namespace {

// select / reject / selectattr / rejectattr: keep items whose test (or truthiness) is `want`.
Value select_items(const Value& v, CallArgs& args, Interpreter& interp, bool by_attribute, bool want) {
  if (!v.truthy()) return Value::generator({});  // jinja2 walks the value only when it is true
  size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty()) fail("template: selectattr/rejectattr need an attribute");
    attribute = to_str(args.positional[next++]);
  }
  std::string test;
  if (next < args.positional.size()) test = to_str(args.positional[next++]);
  if (!test.empty() && !has_test(test)) fail("template: no test named '{}'", test);
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + long(next), args.positional.end());
  std::vector<Value> kept;
  for (const auto& item : iterate(v)) {
    interp.tick();
    const Value subject = by_attribute ? get_path(item, attribute, interp) : item;
    const bool pass = test.empty() ? subject.truthy() : apply_test(test, subject, test_args, interp);
    if (pass == want) kept.push_back(item);
  }
  return Value::generator(std::move(kept));
}

Value do_map(const Value& v, CallArgs& args, Interpreter& interp) {
  std::vector<Value> out;
  if (!v.truthy()) return Value::generator({});
  const Value attribute = arg(args, 99, "attribute");
  if (!attribute.is_undefined()) {
    const Value fallback = arg(args, 99, "default");
    for (const auto& item : iterate(v)) {
      Value x = get_path(item, to_str(attribute), interp);
      out.push_back(x.is_undefined() && !fallback.is_undefined() ? fallback : x);
    }
    return Value::generator(std::move(out));
  }
  if (args.positional.empty()) fail("template: map needs a filter name or attribute=");
  const std::string filter = to_str(args.positional[0]);
  if (!has_filter(filter)) fail("template: no filter named '{}'", filter);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.named = args.named;
  for (const auto& item : iterate(v)) {
    interp.tick();
    CallArgs call = rest;
    out.push_back(apply_filter(filter, item, call, interp));
  }
  return Value::generator(std::move(out));
}

Value do_tojson(const Value& v, CallArgs& args, Interpreter&) {
  JsonOptions opt;
  opt.ensure_ascii = bool_arg(args, 0, "ensure_ascii", false);
  const Value indent = arg(args, 1, "indent");
  if (indent.is_int()) opt.indent = int(std::clamp<int64_t>(indent.as_int(), 0, 64));
  const Value separators = arg(args, 2, "separators");
  if (separators.is_list() && separators.as_list().items.size() == 2) {
    opt.item_separator = to_str(separators.as_list().items[0]);
    opt.key_separator = to_str(separators.as_list().items[1]);
  }
  opt.sort_keys = bool_arg(args, 3, "sort_keys", false);
  return Value(to_json(v, opt));
}

const std::unordered_map<std::string, Filter>& filters() {
  static const std::unordered_map<std::string, Filter> table = {
      {"default",
       [](const Value& v, CallArgs& a, Interpreter&) {
         const bool boolean = bool_arg(a, 1, "boolean", false);
         if (v.is_undefined() || (boolean && !v.truthy())) return arg(a, 0, "default_value", Value(""));
         return v;
       }},
      {"length", [](const Value& v, CallArgs&, Interpreter&) { return Value(length_of(v)); }},
      {"join",
       [](const Value& v, CallArgs& a, Interpreter& in) {
         const std::string sep = to_str(arg(a, 0, "d", Value("")));
         const Value attribute = arg(a, 1, "attribute");
         std::string out;
         bool first = true;
         for (const auto& item : iterate(v)) {
           if (!first) out += sep;
           first = false;
           out += to_str(attribute.is_undefined() ? item : get_path(item, to_str(attribute), in));
           in.check_size(out.size());
         }
         return Value(std::move(out));
       }},
      {"trim",
       [](const Value& v, CallArgs& a, Interpreter&) {
         const Value chars = arg(a, 0, "chars");
         const std::string set = chars.is_string() ? chars.as_string() : "";
         return Value(strip(text_of(v), chars.is_string() ? &set : nullptr, true, true));
       }},
      {"string", [](const Value& v, CallArgs&, Interpreter&) { return Value(text_of(v)); }},
      {"safe", [](const Value& v, CallArgs&, Interpreter&) { return Value(text_of(v)).as_markup(); }},
      {"escape", [](const Value& v, CallArgs&, Interpreter&) { return escape_markup(v); }},
      {"list", [](const Value& v, CallArgs&, Interpreter&) { return Value::list(iterate(v)); }},
      {"first",
       [](const Value& v, CallArgs&, Interpreter&) {
         const auto items = iterate(v);
         return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
       }},
      {"last",
       [](const Value& v, CallArgs&, Interpreter&) {
         const auto items = iterate(v);
         return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
       }},
      {"int", do_int},
      {"float", do_float},
      {"lower", [](const Value& v, CallArgs&, Interpreter&) { return Value(to_lower(text_of(v))); }},
      {"upper", [](const Value& v, CallArgs&, Interpreter&) { return Value(to_upper(text_of(v))); }},
      {"capitalize",
       [](const Value& v, CallArgs&, Interpreter&) {
         const auto chars = utf8_chars(text_of(v));
         std::string out;
         for (size_t i = 0; i < chars.size(); ++i) out += i == 0 ? to_upper(chars[i]) : to_lower(chars[i]);
         return Value(std::move(out));
       }},
      {"title", [](const Value& v, CallArgs&, Interpreter&) { return Value(jinja_title(text_of(v))); }},
      {"items", [](const Value& v, CallArgs&, Interpreter&) { return items_of(v, true); }},
      {"dictsort",
       [](const Value& v, CallArgs& a, Interpreter&) {
         const bool cs = bool_arg(a, 0, "case_sensitive", false);
         const std::string by = to_str(arg(a, 1, "by", Value("key")));
         const bool reverse = bool_arg(a, 2, "reverse", false);
         const size_t pos = by == "value" ? 1 : 0;
         return sort_items(items_of(v).as_list().items, reverse, cs,
                           [pos](const Value& pair) { return pair.as_list().items[pos]; });
       }},
      {"sort",
       [](const Value& v, CallArgs& a, Interpreter& in) {
         const bool reverse = bool_arg(a, 0, "reverse", false);
         const bool cs = bool_arg(a, 1, "case_sensitive", false);
         const Value attribute = arg(a, 2, "attribute");
         return sort_items(iterate(v), reverse, cs, [&](const Value& x) {
           return attribute.is_undefined() || attribute.is_none() ? x : get_path(x, to_str(attribute), in);
         });
       }},
      {"unique",
       [](const Value& v, CallArgs& a, Interpreter& in) {
         const bool cs = bool_arg(a, 0, "case_sensitive", false);
         const Value attribute = arg(a, 1, "attribute");
         std::vector<Value> seen, out;
         for (const auto& item : iterate(v)) {
           const Value key =
               fold(attribute.is_undefined() || attribute.is_none() ? item : get_path(item, to_str(attribute), in), cs);
           if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
             seen.push_back(key);
             out.push_back(item);
           }
         }
         return Value::generator(std::move(out));
       }},
      {"replace",
       [](const Value& v, CallArgs& a, Interpreter& in) {
         const std::string out = replace_all(text_of(v), to_str(arg(a, 0, "old")), to_str(arg(a, 1, "new")),
                                             long(int_arg(a, 2, "count", -1)));
         in.check_size(out.size());
         return Value(out);
       }},
      {"indent", do_indent},
      {"round", do_round},
      {"abs",
       [](const Value& v, CallArgs&, Interpreter&) {
         if (v.is_float()) return Value(std::fabs(v.as_float()));
         if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
         if (v.is_bool()) return Value(int64_t(v.as_bool()));
         fail("template: bad operand type for abs(): '{}'", v.type_name());
       }},
      {"sum",
       [](const Value& v, CallArgs& a, Interpreter& in) {
         const Value attribute = arg(a, 0, "attribute");
         Value total = arg(a, 1, "start", Value(int64_t(0)));
         for (const auto& item : iterate(v)) {
           const Value x = attribute.is_undefined() || attribute.is_none() ? item : get_path(item, to_str(attribute), in);
           if (!x.is_number() || !total.is_number())
             fail("template: sum: unsupported operand types '{}' and '{}'", total.type_name(), x.type_name());
           if (total.is_float() || x.is_float()) {
             total = Value(total.to_double() + x.to_double());
           } else {
             total = Value(int64_t(total.to_double()) + int64_t(x.to_double()));
           }
         }
         return total;
       }},
      {"max", [](const Value& v, CallArgs& a, Interpreter& in) { return min_max(v, a, in, true); }},
      {"min", [](const Value& v, CallArgs& a, Interpreter& in) { return min_max(v, a, in, false); }},
      {"reverse",
       [](const Value& v, CallArgs&, Interpreter&) {
         if (v.is_string()) {
           auto chars = utf8_chars(v.as_string());
           std::string out;
           for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
           return Value(std::move(out));
         }
         auto items = iterate(v);
         std::reverse(items.begin(), items.end());
         return Value::generator(std::move(items));  // Python's reversed(): an iterator
       }},
      {"map", do_map},
      {"select", [](const Value& v, CallArgs& a, Interpreter& in) { return select_items(v, a, in, false, true); }},
      {"reject", [](const Value& v, CallArgs& a, Interpreter& in) { return select_items(v, a, in, false, false); }},
      {"selectattr", [](const Value& v, CallArgs& a, Interpreter& in) { return select_items(v, a, in, true, true); }},
      {"rejectattr", [](const Value& v, CallArgs& a, Interpreter& in) { return select_items(v, a, in, true, false); }},
      {"tojson", do_tojson},
      {"attr",
       [](const Value& v, CallArgs& a, Interpreter&) {
         const std::string name = to_str(arg(a, 0, "name"));
         if (v.is_dict() && v.as_dict().namespace_object) {
           const Value* found = v.as_dict().find(Value(name));
           if (found) return *found;
         }
         const Value m = method_of(v, name);
         return m.is_undefined() ? Value::undefined(fmt::format("'{} object' has no attribute '{}'", v.type_name(), name))
                                 : m;
       }},
      {"format",
       [](const Value& v, CallArgs& a, Interpreter&) {
         return Value(percent_format(text_of(v), Value::list(a.positional, true)));
       }},
      {"wordcount",
       [](const Value& v, CallArgs&, Interpreter&) { return Value(int64_t(split(text_of(v), nullptr, -1).size())); }},
  };
  return table;
}

const Filter* find_filter(std::string_view name) {
  static const std::unordered_map<std::string, std::string> aliases = {{"d", "default"}, {"count", "length"},
                                                                       {"e", "escape"}};
  std::string key(name);
  if (const auto a = aliases.find(key); a != aliases.end()) key = a->second;
  const auto it = filters().find(key);
  return it == filters().end() ? nullptr : &it->second;
}

}  // namespace

bool has_filter(std::string_view name) { return find_filter(name) != nullptr; }

Value apply_filter(std::string_view name, const Value& value, CallArgs& args, Interpreter& interp) {
  const Filter* filter = find_filter(name);
  if (!filter) fail("template: no filter named '{}'", name);
  static const std::vector<std::string_view> kSafeOnUndefined = {"default", "d", "length", "count", "join", "trim",
                                                                 "string", "list", "first", "last", "items",
                                                                 "safe", "lower", "upper", "escape", "e",
                                                                 "capitalize", "title", "replace", "indent",
                                                                 "select", "reject", "selectattr", "rejectattr",
                                                                 "map", "unique", "sort", "reverse", "int",
                                                                 "float", "wordcount", "dictsort", "sum", "max",
                                                                 "min", "attr", "format"};
  if (value.is_undefined() &&
      std::find(kSafeOnUndefined.begin(), kSafeOnUndefined.end(), name) == kSafeOnUndefined.end())
    fail_undefined(value);
  return (*filter)(value, args, interp);
}

}  // namespace ridge::tmpl
