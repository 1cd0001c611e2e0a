// The globals of Hugging Face's chat-template environment: jinja2's range, namespace and dict, and
// transformers' raise_exception and strftime_now; also Python's printf-style `%` formatting.
#include <fmt/format.h>
#include <fmt/printf.h>

#include <cmath>
#include <ctime>

#include "core/error.h"
#include "template/args.h"
#include "template/builtins.h"

namespace ridge::tmpl {
namespace {

Value make_range(CallArgs& a, Interpreter& in) {
  int64_t start = 0, stop = 0, step = 1;
  auto num = [](const Value& v) {
    if (!v.is_int() && !v.is_bool()) fail("template: range() needs integers, got {}", v.type_name());
    return v.is_int() ? v.as_int() : int64_t(v.as_bool());
  };
  if (a.positional.size() == 1) {
    stop = num(a.positional[0]);
  } else if (a.positional.size() == 2 || a.positional.size() == 3) {
    start = num(a.positional[0]);
    stop = num(a.positional[1]);
    if (a.positional.size() == 3) step = num(a.positional[2]);
  } else {
    fail("template: range() takes 1 to 3 arguments");
  }
  if (step == 0) fail("template: range() arg 3 must not be zero");
  const double count = std::max(0.0, std::ceil((double(stop) - double(start)) / double(step)));
  // The sandbox's own cap, and the step budget: a range is walked, so it costs what it holds.
  if (count > 100000) fail("template: range too big ({} items; the limit is 100000)", int64_t(count));
  in.tick(uint64_t(count));
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(i);
  return Value::list(std::move(items));
}

Value make_namespace(CallArgs& a, Interpreter&) {
  Value ns = Value::dict();
  ns.as_dict().namespace_object = true;
  for (const auto& v : a.positional) {
    if (!v.is_dict()) fail("template: namespace() takes a mapping or keyword arguments");
    for (const auto& [k, item] : v.as_dict().items) ns.as_dict().set(k, item);
  }
  for (const auto& [k, v] : a.named) ns.as_dict().set(Value(k), v);
  return ns;
}

Value make_dict(CallArgs& a, Interpreter&) {
  Value d = Value::dict();
  for (const auto& v : a.positional) {
    if (!v.is_dict()) fail("template: dict() takes a mapping or keyword arguments");
    for (const auto& [k, item] : v.as_dict().items) d.as_dict().set(k, item);
  }
  for (const auto& [k, v] : a.named) d.as_dict().set(Value(k), v);
  return d;
}

Value strftime_now(CallArgs& a, Interpreter& in) {
  const std::string format = to_str(arg(a, 0, "format"));
  std::tm tm{};
  gmtime_r(&in.now, &tm);
  char buf[512];
  const size_t n = format.empty() ? 0 : std::strftime(buf, sizeof buf, format.c_str(), &tm);
  if (n == 0 && !format.empty()) fail("template: strftime_now: format too long or empty result");
  return Value(std::string(buf, n));
}

}  // namespace

void install_globals(Frame& frame) {
  frame["range"] = Value::function("range", make_range);
  frame["namespace"] = Value::function("namespace", make_namespace);
  frame["dict"] = Value::function("dict", make_dict);
  frame["strftime_now"] = Value::function("strftime_now", strftime_now);
  frame["raise_exception"] = Value::function("raise_exception", [](CallArgs& a, Interpreter&) -> Value {
    throw Error("template raised: " + to_str(arg(a, 0, "message")));
  });
}

std::string percent_format(const std::string& format, const Value& args) {
  std::vector<Value> values;
  if (args.is_list() && args.as_list().tuple) {
    values = args.as_list().items;
  } else {
    values.push_back(args);
  }
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) fail("template: incomplete format");
    std::string spec = "%";
    while (i < format.size() && std::string_view("-+ 0#.123456789").find(format[i]) != std::string_view::npos)
      spec += format[i++];
    if (i >= format.size()) fail("template: incomplete format");
    const char conv = format[i];
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (next >= values.size()) fail("template: not enough arguments for format string");
    const Value& v = values[next++];
    if (conv == 's' || conv == 'r') {
      const std::string text = conv == 's' ? to_str(v) : to_repr(v);
      out += fmt::sprintf(spec + "s", text);
    } else if (conv == 'd' || conv == 'i') {
      if (!v.is_number()) fail("template: %d format: a real number is required, not {}", v.type_name());
      out += fmt::sprintf(spec + "lld", v.is_float() ? (long long)std::trunc(v.as_float()) : (long long)(v.is_int() ? v.as_int() : v.as_bool()));
    } else if (conv == 'f' || conv == 'e' || conv == 'g') {
      if (!v.is_number()) fail("template: %{} format: a real number is required, not {}", conv, v.type_name());
      out += fmt::sprintf(spec + conv, v.to_double());
    } else {
      fail("template: unsupported format character '{}'", conv);
    }
  }
  if (next < values.size()) fail("template: not all arguments converted during string formatting");
  return out;
}

}  // namespace ridge::tmpl
