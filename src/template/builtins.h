#pragma once
// jinja2's built-in filters and tests, the methods of Python's str / dict / list that templates
// call, and the globals Hugging Face's chat-template environment provides (range, namespace,
// dict, raise_exception, strftime_now).
#include <string>
#include <string_view>

#include "template/interpreter.h"
#include "template/value.h"

namespace ridge::tmpl {

bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value apply_filter(std::string_view name, const Value& value, CallArgs& args, Interpreter& interp);
bool apply_test(std::string_view name, const Value& value, CallArgs& args, Interpreter& interp);

// `object.name` for a Python method of a str, dict or list: a bound callable; undefined when none.
Value method_of(const Value& object, const std::string& name);

void install_globals(Frame& frame);

struct JsonOptions {
  int indent = -1;  // < 0: one line
  std::string item_separator;  // empty: Python's default (", " on one line, "," with indent)
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// Python's json.dumps as transformers' `tojson` calls it.
std::string to_json(const Value& value, const JsonOptions& options);

// HTML escaping as markupsafe does it (& < > " '), and jinja2's `escape` (Markup stays as it is).
std::string html_escape(const std::string& s);
Value escape_markup(const Value& v);

// Python's printf-style `text % args`.
std::string percent_format(const std::string& format, const Value& args);

}  // namespace ridge::tmpl
