#pragma once
// The body of POST /v1/messages (and /v1/messages/count_tokens), Anthropic's Messages API, read
// into the request every API shares: `system` as a leading system message, content blocks (text,
// tool_use, tool_result; earlier thinking blocks dropped, as the templates drop old thinking),
// tools with input_schema, tool_choice (auto, any, tool, none), stop_sequences, `thinking`
// (enabled with a budget, or disabled). Every mistake is an ApiError (400) naming the field,
// which the server writes in Anthropic's error shape.
#include <string_view>

#include "serve/openai_request.h"

namespace ridge {

// count_only: for count_tokens, where max_tokens is not required.
OpenaiRequest parse_anthropic_request(std::string_view body, bool count_only = false);

}  // namespace ridge
