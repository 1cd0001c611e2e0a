// The Responses API's request reader and its bounded store: input items to messages (calls joined
// into one assistant turn, outputs matched to calls by call_id), instructions first and not
// stored, previous_response_id resolved (404 once dropped from the bound), text.format as a schema.
#include <gtest/gtest.h>

#include "serve/api_error.h"
#include "serve/responses_request.h"

namespace ridge {
namespace {

TEST(ResponsesRequest, ItemsToMessages) {
  ResponseStore store;
  const OpenaiRequest r = parse_responses_request(R"({"model": "m", "instructions": "Be brief.", "max_output_tokens": 9,
    "input": [{"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
              {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
              {"type": "function_call", "call_id": "c2", "name": "w", "arguments": "{\"a\":1}"},
              {"type": "function_call_output", "call_id": "c2", "output": "sunny"},
              {"type": "reasoning", "summary": []}],
    "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}}})", store);
  EXPECT_EQ(r.api, Api::kResponses);
  EXPECT_EQ(r.max_tokens, 9);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "Weather?");
  EXPECT_EQ(r.messages[2].tool_calls.size(), 2u);
  EXPECT_EQ(r.messages[3].role, "tool");
  EXPECT_EQ(r.messages[3].tool_call_id, "c2");
  EXPECT_EQ(r.structured.kind, grammar::GrammarSpec::Kind::kJsonSchema);
  ASSERT_TRUE(r.responses);
  EXPECT_EQ(r.responses->conversation.size(), 3u);  // instructions are not part of it
  EXPECT_EQ(r.responses->id.rfind("resp_", 0), 0u);
}

TEST(ResponsesRequest, PreviousResponsesComeFromTheBoundedStore) {
  ResponseStore store(2);
  store.put("resp_a", {ChatMessage{"user", "A", {}, {}}, ChatMessage{"assistant", "a", {}, {}}});
  const OpenaiRequest r = parse_responses_request(R"({"previous_response_id": "resp_a", "input": "B"})", store);
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1].content, "a");
  EXPECT_EQ(r.messages[2].content, "B");
  store.put("resp_b", {});
  store.put("resp_c", {});
  EXPECT_EQ(store.size(), 2u);
  try {
    parse_responses_request(R"({"previous_response_id": "resp_a", "input": "B"})", store);
    FAIL() << "resp_a was dropped";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 404);
    EXPECT_EQ(e.code, "previous_response_not_found");
  }
}

TEST(ResponsesRequest, RefusesWhatItCannotHonour) {
  ResponseStore store;
  auto param_of = [&](const std::string& body) -> std::string {
    try {
      parse_responses_request(body, store);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400) << body;
      return e.param;
    }
    return "accepted";
  };
  EXPECT_EQ(param_of(R"({})"), "input");
  EXPECT_EQ(param_of(R"({"input": []})"), "input");
  EXPECT_EQ(param_of(R"({"input": [{"type": "function_call_output", "call_id": "x", "output": "y"}]})"), "input[0].call_id");
  EXPECT_EQ(param_of(R"({"input": [{"type": "computer_call"}]})"), "input[0].type");
  EXPECT_EQ(param_of(R"({"input": "x", "tools": [{"type": "web_search"}]})"), "tools[0].type");
  EXPECT_EQ(param_of(R"({"input": "x", "max_output_tokens": 0})"), "max_output_tokens");
  EXPECT_EQ(param_of(R"({"input": "x", "text": {"format": {"type": "json_schema"}}})"), "text.format.schema");
  EXPECT_EQ(param_of(R"({"input": "x", "tool_choice": "required"})"), "tool_choice");
  EXPECT_EQ(param_of(R"({"input": "x", "text": {"format": {"type": 3}}})"), "text.format.type");
  EXPECT_EQ(param_of(R"({"input": "x", "text": {"format": {"type": "json_schema", "schema": {}, "name": []}}})"), "text.format.name");
  EXPECT_EQ(param_of(R"({"input": "x"})"), "accepted");
}

}  // namespace
}  // namespace ridge
