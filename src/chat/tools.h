#pragma once
// Tool calling's vocabulary: the tools a request offers (OpenAI's tools[]), the caller's choice
// among them (tool_choice), and the calls found in a model's output. The chat formats that render
// tools into prompts and read calls back are in tool_format.h.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ridge::chat {

using Json = nlohmann::ordered_json;  // key order is kept: templates print tools as they were sent

struct Tool {
  std::string name;
  Json function;    // the "function" object as sent (name, description, parameters, ...)
  Json parameters;  // function.parameters; {"type": "object", "properties": {}} when absent
  Json definition;  // the whole tool as sent: {"type": "function", "function": {...}}
};

struct ToolChoice {
  enum class Mode { kNone, kAuto, kRequired, kNamed };
  Mode mode = Mode::kAuto;
  std::string name;  // kNamed: the function that must be called
};

// One call in a model's output, possibly still being written (while streaming).
struct ParsedCall {
  std::string name;
  bool name_done = false;  // the name is complete
  std::string arguments;   // the JSON text of the arguments as written so far
  bool done = false;       // the call's text is complete
};

struct ParsedOutput {
  std::string content;  // the text outside calls (a possible start of a call is held back)
  std::vector<ParsedCall> calls;
};

}  // namespace ridge::chat
