#include "template/template.h"

#include "core/error.h"
#include "template/builtins.h"

namespace ridge::tmpl {

Template::Template(std::string_view source, const ParseLimits& limits)
    : source_(source), parsed_(std::make_shared<ParsedTemplate>(parse_template(source, limits))) {}

std::string Template::render(const Value& context, const RenderOptions& options) const {
  Interpreter interp;
  interp.limits = options.limits;
  interp.now = options.now != 0 ? options.now : std::time(nullptr);
  interp.frames.emplace_back();
  install_globals(interp.frames.back());
  if (context.is_dict()) {
    for (const auto& [k, v] : context.as_dict().items) interp.frames.back()[to_str(k)] = v;
  } else if (!context.is_undefined()) {
    fail("template: the context must be a mapping of names to values");
  }
  std::string out;
  interp.exec(parsed_->body, out);
  return out;
}

Value from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(None{});
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return Value(int64_t(json.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : json) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Value d = Value::dict();
      for (const auto& [k, v] : json.items()) d.as_dict().set(Value(k), from_json(v));
      return d;
    }
    default: fail("template: unsupported JSON value");
  }
}

}  // namespace ridge::tmpl
