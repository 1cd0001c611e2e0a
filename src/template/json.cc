// Python's json.dumps over template values (transformers' `tojson`): ", " / ": " separators on
// one line, "," at line ends with an indent, non-ASCII kept raw unless ensure_ascii, floats by repr.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/python_json_escape.h"
#include "template/builtins.h"
#include "tokenizer/utf8.h"

namespace ridge::tmpl {
namespace {

void write_string(const std::string& text, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = uint8_t(text[i]);
    if (c >= 0x80 && ensure_ascii) {
      const uint32_t cp = utf8::decode_lenient(text, i);
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", cp);
      }
      continue;
    }
    append_python_json_byte(c, ensure_ascii, out);
    ++i;
  }
  out += '"';
}

std::string key_text(const Value& key) {
  if (key.is_string()) return key.as_string();
  if (key.is_bool()) return key.as_bool() ? "true" : "false";
  if (key.is_none()) return "null";
  if (key.is_int() || key.is_float()) return to_str(key);
  fail("template: tojson: keys must be str, int, float, bool or None, not {}", key.type_name());
}

struct Writer {
  const JsonOptions& opt;
  std::string out;
  int depth = 0;

  void newline() {
    out += '\n';
    out.append(size_t(opt.indent) * size_t(depth), ' ');
  }

  void write(const Value& v) {
    if (depth > 500) fail("template: tojson: nesting too deep");
    const std::string& item_sep = opt.item_separator;
    if (v.is_dict() && !v.as_dict().namespace_object) {
      auto items = v.as_dict().items;
      if (items.empty()) {
        out += "{}";
        return;
      }
      if (opt.sort_keys)
        std::stable_sort(items.begin(), items.end(),
                         [](const auto& a, const auto& b) { return key_text(a.first) < key_text(b.first); });
      out += '{';
      ++depth;
      bool first = true;
      for (const auto& [k, item] : items) {
        if (!first) out += item_sep;
        first = false;
        if (opt.indent >= 0) newline();
        write_string(key_text(k), opt.ensure_ascii, out);
        out += opt.key_separator;
        write(item);
      }
      --depth;
      if (opt.indent >= 0) newline();
      out += '}';
    } else if (v.is_list()) {
      if (v.as_list().generator) fail("template: Object of type generator is not JSON serializable");
      const auto& items = v.as_list().items;
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      ++depth;
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        if (opt.indent >= 0) newline();
        write(items[i]);
      }
      --depth;
      if (opt.indent >= 0) newline();
      out += ']';
    } else if (v.is_string()) {
      write_string(v.as_string(), opt.ensure_ascii, out);
    } else if (v.is_none()) {
      out += "null";
    } else if (v.is_bool()) {
      out += v.as_bool() ? "true" : "false";
    } else if (v.is_int()) {
      out += std::to_string(v.as_int());
    } else if (v.is_float()) {
      const double d = v.as_float();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : float_repr(d);
    } else if (v.is_undefined()) {
      fail("template: Object of type Undefined is not JSON serializable");
    } else {
      fail("template: Object of type {} is not JSON serializable", v.type_name());
    }
  }
};

}  // namespace

std::string to_json(const Value& value, const JsonOptions& options) {
  JsonOptions opt = options;
  if (opt.item_separator.empty()) opt.item_separator = opt.indent >= 0 ? "," : ", ";
  Writer w{opt, {}, 0};
  w.write(value);
  return std::move(w.out);
}

}  // namespace ridge::tmpl
