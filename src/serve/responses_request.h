#pragma once
// The body of POST /v1/responses, OpenAI's Responses API, read into the request every API shares:
// `input` as a string or a list of items (messages with input_text / output_text parts,
// function_call and function_call_output items, reasoning items dropped), `instructions` as a
// leading system message, flat function `tools` with tool_choice, `text.format` (json_schema,
// json_object), max_output_tokens, and `previous_response_id` resolved through the store (the
// earlier conversation comes first). What the writer echoes back goes in ResponsesContext.
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "serve/openai_request.h"
#include "serve/response_store.h"

namespace ridge {

// What a Responses answer carries besides the output, and what is stored after it.
struct ResponsesContext {
  std::string id;                          // "resp_..."
  bool store = true;
  ResponseStore* response_store = nullptr; // where the conversation goes when store is true
  std::vector<ChatMessage> conversation;   // earlier turns and this input, without instructions
  nlohmann::ordered_json echo;             // instructions, tools, tool_choice, text, temperature, ... as sent
};

// Throws ApiError: 400 naming the field, 404 for a previous_response_id the store does not hold.
OpenaiRequest parse_responses_request(std::string_view body, ResponseStore& store);

}  // namespace ridge
