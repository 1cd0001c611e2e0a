// Methods templates call on Python objects: str's (strip, split, startswith, format, ...), dict's
// (items, keys, values, get) and list's read-only ones. The sandbox Hugging Face renders templates
// in refuses methods that change a list or dict (append, update, ...), and so does this.
#include <algorithm>
#include <set>

#include "core/error.h"
#include "template/args.h"
#include "template/builtins.h"
#include "template/text.h"

namespace ridge::tmpl {
namespace {

using Method = std::function<Value(const Value& self, CallArgs& args)>;

const std::string* opt_string(const CallArgs& args, size_t index, std::string_view name, std::string& storage) {
  const Value v = arg(args, index, name);
  if (v.is_undefined() || v.is_none()) return nullptr;
  if (!v.is_string()) fail("template: argument '{}' must be a string", name);
  storage = v.as_string();
  return &storage;
}

bool affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) fail("template: startswith/endswith need a string or a tuple of strings");
    const std::string& x = a.as_string();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is_list()) return std::any_of(affix.as_list().items.begin(), affix.as_list().items.end(), one);
  return one(affix);
}

Value string_list(const std::vector<std::string>& parts) {
  std::vector<Value> out(parts.begin(), parts.end());
  return Value::list(std::move(out));
}

// str.format with "{}", "{0}" and "{name}" fields (no format specs beyond an empty one).
std::string str_format(const std::string& fmt_text, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt_text.size(); ++i) {
    const char c = fmt_text[i];
    if (c == '{' && i + 1 < fmt_text.size() && fmt_text[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (c == '}' && i + 1 < fmt_text.size() && fmt_text[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (c == '{') {
      const size_t close = fmt_text.find('}', i);
      if (close == std::string::npos) fail("template: str.format: unmatched '{{'");
      const std::string field = fmt_text.substr(i + 1, close - i - 1);
      if (field.find_first_of(":!") != std::string::npos) fail("template: str.format specs are not supported");
      Value v;
      if (field.empty()) {
        v = arg(args, auto_index++, "\x01");
      } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
        v = field.size() < 9 ? arg(args, size_t(std::stoul(field)), "\x01") : Value();
      } else {
        v = arg(args, SIZE_MAX, field);
      }
      if (v.is_undefined()) fail("template: str.format: no argument for '{{{}}}'", field);
      out += to_str(v);
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

const std::unordered_map<std::string, Method>& string_methods() {
  static const std::unordered_map<std::string, Method> table = {
      {"strip", [](const Value& s, CallArgs& a) { std::string c; return Value(strip(s.as_string(), opt_string(a, 0, "chars", c), true, true)); }},
      {"lstrip", [](const Value& s, CallArgs& a) { std::string c; return Value(strip(s.as_string(), opt_string(a, 0, "chars", c), true, false)); }},
      {"rstrip", [](const Value& s, CallArgs& a) { std::string c; return Value(strip(s.as_string(), opt_string(a, 0, "chars", c), false, true)); }},
      {"split",
       [](const Value& s, CallArgs& a) {
         std::string c;
         const std::string* sep = opt_string(a, 0, "sep", c);
         if (sep && sep->empty()) fail("template: split: empty separator");
         return string_list(split(s.as_string(), sep, long(int_arg(a, 1, "maxsplit", -1))));
       }},
      {"splitlines",
       [](const Value& s, CallArgs&) {
         std::vector<std::string> lines;
         std::string cur;
         const std::string& t = s.as_string();
         for (size_t i = 0; i < t.size(); ++i) {
           if (t[i] == '\n' || t[i] == '\r') {
             if (t[i] == '\r' && i + 1 < t.size() && t[i + 1] == '\n') ++i;
             lines.push_back(cur);
             cur.clear();
           } else {
             cur += t[i];
           }
         }
         if (!cur.empty()) lines.push_back(cur);
         return string_list(lines);
       }},
      {"startswith", [](const Value& s, CallArgs& a) { return Value(affix_match(s.as_string(), arg(a, 0, "prefix"), true)); }},
      {"endswith", [](const Value& s, CallArgs& a) { return Value(affix_match(s.as_string(), arg(a, 0, "suffix"), false)); }},
      {"upper", [](const Value& s, CallArgs&) { return Value(to_upper(s.as_string())); }},
      {"lower", [](const Value& s, CallArgs&) { return Value(to_lower(s.as_string())); }},
      {"replace",
       [](const Value& s, CallArgs& a) {
         const Value from = arg(a, 0, "old"), to = arg(a, 1, "new");
         if (!from.is_string() || !to.is_string()) fail("template: replace needs two strings");
         return Value(replace_all(s.as_string(), from.as_string(), to.as_string(), long(int_arg(a, 2, "count", -1))));
       }},
      {"title",
       [](const Value& s, CallArgs&) {
         std::string out;
         bool prev_letter = false;
         for (char ch : s.as_string()) {
           const bool letter = std::isalpha(uint8_t(ch));
           out += letter ? (prev_letter ? char(std::tolower(uint8_t(ch))) : char(std::toupper(uint8_t(ch)))) : ch;
           prev_letter = letter;
         }
         return Value(out);
       }},
      {"capitalize",
       [](const Value& s, CallArgs&) {
         std::string out = to_lower(s.as_string());
         if (!out.empty()) out[0] = char(std::toupper(uint8_t(out[0])));
         return Value(out);
       }},
      {"format", [](const Value& s, CallArgs& a) { return Value(str_format(s.as_string(), a)); }},
      {"find",
       [](const Value& s, CallArgs& a) {
         const size_t at = s.as_string().find(to_str(arg(a, 0, "sub")));
         return Value(at == std::string::npos ? int64_t(-1) : int64_t(utf8_length(s.as_string().substr(0, at))));
       }},
      {"rfind",
       [](const Value& s, CallArgs& a) {
         const size_t at = s.as_string().rfind(to_str(arg(a, 0, "sub")));
         return Value(at == std::string::npos ? int64_t(-1) : int64_t(utf8_length(s.as_string().substr(0, at))));
       }},
      {"count",
       [](const Value& s, CallArgs& a) {
         const std::string sub = to_str(arg(a, 0, "sub"));
         if (sub.empty()) return Value(int64_t(utf8_length(s.as_string()) + 1));
         int64_t n = 0;
         for (size_t at = s.as_string().find(sub); at != std::string::npos; at = s.as_string().find(sub, at + sub.size())) ++n;
         return Value(n);
       }},
      {"join",
       [](const Value& s, CallArgs& a) {
         std::string out;
         bool first = true;
         for (const auto& item : iterate(arg(a, 0, "iterable"))) {
           if (!item.is_string()) fail("template: str.join expects strings, found {}", item.type_name());
           if (!first) out += s.as_string();
           first = false;
           out += item.as_string();
         }
         return Value(out);
       }},
      {"isdigit", [](const Value& s, CallArgs&) { const auto& t = s.as_string(); return Value(!t.empty() && std::all_of(t.begin(), t.end(), ::isdigit)); }},
      {"isalpha", [](const Value& s, CallArgs&) { const auto& t = s.as_string(); return Value(!t.empty() && std::all_of(t.begin(), t.end(), ::isalpha)); }},
      {"isalnum", [](const Value& s, CallArgs&) { const auto& t = s.as_string(); return Value(!t.empty() && std::all_of(t.begin(), t.end(), ::isalnum)); }},
      {"isspace",
       [](const Value& s, CallArgs&) {
         const auto chars = utf8_chars(s.as_string());
         return Value(!chars.empty() && std::all_of(chars.begin(), chars.end(), [](const std::string& c) { return is_space_char(c); }));
       }},
      {"isupper", [](const Value& s, CallArgs&) { const auto& t = s.as_string(); return Value(std::any_of(t.begin(), t.end(), ::isalpha) && to_upper(t) == t); }},
      {"islower", [](const Value& s, CallArgs&) { const auto& t = s.as_string(); return Value(std::any_of(t.begin(), t.end(), ::isalpha) && to_lower(t) == t); }},
  };
  return table;
}

Value dict_method(const Value& self, const std::string& name, CallArgs& a) {
  const Dict& d = self.as_dict();
  if (name == "get") {
    const Value* v = d.find(arg(a, 0, "key"));
    return v ? *v : arg(a, 1, "default", Value(None{}));
  }
  std::vector<Value> out;
  for (const auto& [k, v] : d.items) {
    if (name == "items") out.push_back(Value::list({k, v}, true));
    if (name == "keys") out.push_back(k);
    if (name == "values") out.push_back(v);
  }
  return Value::list(std::move(out));
}

}  // namespace

Value method_of(const Value& object, const std::string& name) {
  static const std::set<std::string> kMutating = {"append", "extend", "insert", "pop",    "remove",  "clear",
                                                  "sort",   "reverse", "update", "popitem", "setdefault"};
  if (object.is_string()) {
    const auto it = string_methods().find(name);
    if (it == string_methods().end()) return Value();
    const Method* method = &it->second;
    return Value::function(name, [object, method](CallArgs& a, Interpreter&) { return (*method)(object, a); });
  }
  const bool is_dict = object.is_dict() && !object.as_dict().namespace_object;
  if (!is_dict && !object.is_list()) return Value();
  if (kMutating.count(name) && (name != "update" || is_dict) && (is_dict || name != "popitem")) {
    const std::string type = object.type_name();
    return Value::function(name, [name, type](CallArgs&, Interpreter&) -> Value {
      fail("template: access to attribute '{}' of '{}' object is unsafe", name, type);
    });
  }
  if (is_dict && (name == "items" || name == "keys" || name == "values" || name == "get")) {
    return Value::function(name, [object, name](CallArgs& a, Interpreter&) { return dict_method(object, name, a); });
  }
  if (object.is_list() && (name == "index" || name == "count")) {
    return Value::function(name, [object, name](CallArgs& a, Interpreter&) -> Value {
      const Value x = arg(a, 0, "value");
      const auto& items = object.as_list().items;
      int64_t n = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        if (!equals(items[i], x)) continue;
        if (name == "index") return int64_t(i);
        ++n;
      }
      if (name == "index") fail("template: {} is not in list", to_repr(x));
      return n;
    });
  }
  return Value();
}

}  // namespace ridge::tmpl
