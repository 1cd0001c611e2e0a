#pragma once
// One byte of a JSON string as Python's json.dumps writes it: '"', '\\' and the C0 controls
// escaped (\b \f \n \r \t by name, the others as \u00XX), and DEL as \u007f when `escape_del`
// (ensure_ascii). Shared by the tool-call prompts (chat/python_json) and templates' tojson.
#include <fmt/format.h>

#include <string>

namespace ridge {

inline void append_python_json_byte(unsigned char c, bool escape_del, std::string& out) {
  switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20 || (escape_del && c == 0x7f)) {
        out += fmt::format("\\u{:04x}", c);
      } else {
        out += char(c);
      }
  }
}

}  // namespace ridge
