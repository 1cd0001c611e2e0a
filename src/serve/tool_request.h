#pragma once
// The tool-calling fields of a chat request: tools, tool_choice, parallel_tool_calls, and the
// tool_calls / tool_call_id of the conversation's messages. Read from the body parsed with key order
// kept (templates print tools as sent). Every mistake is an ApiError (400) naming the field.
#include <nlohmann/json.hpp>

#include "serve/openai_request.h"

namespace ridge {

// Fills r.tools, r.tool_choice, r.parallel_tool_calls and each message's tool_calls / tool_call_id
// (r.messages already holds the messages' roles and contents, in order).
void read_tool_fields(const nlohmann::ordered_json& body, OpenaiRequest& r);

}  // namespace ridge
