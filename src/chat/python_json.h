#pragma once
// JSON text as chat templates print it: Jinja's `tojson` in Hugging Face's chat-template sandbox is
// Python's json.dumps(value, ensure_ascii=False) -- ", " and ": " between items, non-ASCII text raw
// -- and with indent=N one item per line (and "," at line ends). Keys keep their order.
#include <string>

#include <nlohmann/json.hpp>

namespace ridge::chat {

// indent < 0: one line.
std::string python_json(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace ridge::chat
