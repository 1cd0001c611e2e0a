#include "chat/python_json.h"

#include <fmt/format.h>

#include "core/python_json_escape.h"

namespace ridge::chat {
namespace {

using Json = nlohmann::ordered_json;

// Python escapes '"', '\\' and the C0 controls; \b \f \n \r \t by name, the others as \u00XX.
void write_string(const std::string& text, std::string& out) {
  out += '"';
  for (unsigned char c : text) append_python_json_byte(c, /*escape_del=*/true, out);
  out += '"';
}

void newline(int indent, int depth, std::string& out) {
  out += '\n';
  out.append(size_t(indent) * size_t(depth), ' ');
}

void write(const Json& v, int indent, int depth, std::string& out) {
  const bool multiline = indent >= 0;
  const char* item_sep = multiline ? "," : ", ";
  switch (v.type()) {
    case Json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first) out += item_sep;
        first = false;
        if (multiline) newline(indent, depth + 1, out);
        write_string(key, out);
        out += ": ";
        write(value, indent, depth + 1, out);
      }
      if (multiline) newline(indent, depth, out);
      out += '}';
      return;
    }
    case Json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += item_sep;
        first = false;
        if (multiline) newline(indent, depth + 1, out);
        write(item, indent, depth + 1, out);
      }
      if (multiline) newline(indent, depth, out);
      out += ']';
      return;
    }
    case Json::value_t::string: write_string(v.get_ref<const std::string&>(), out); return;
    case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::number_float: {
      // Python writes floats by repr: 1.0 keeps its ".0", large ones take an exponent (1e+100).
      const std::string text = v.dump();
      out += text;
      if (text.find_first_of(".eEn") == std::string::npos) out += ".0";
      return;
    }
    default: out += v.dump(); return;  // integers
  }
}

}  // namespace

std::string python_json(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  write(value, indent, 0, out);
  return out;
}

}  // namespace ridge::chat
