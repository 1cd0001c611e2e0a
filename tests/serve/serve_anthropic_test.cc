// Anthropic's Messages API over the scripted backend: the request read into the shared one (system,
// blocks, tool results by id, stop_sequences, thinking), the message body, the stream's event
// order, count_tokens, the error shape and x-api-key. And a thinking model's output split into
// reasoning and content in both APIs, streamed and whole. (The official SDKs are exercised against
// a real model in tests/conformance/test_anthropic_api.py.)
#include <gtest/gtest.h>

#include "serve/anthropic_request.h"
#include "serve/api_error.h"
#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::FakeBackend;
using testing::FakeConfig;
using testing::post_json;
using testing::TestServer;

// "event: NAME\ndata: JSON\n\n" events of an Anthropic stream.
std::vector<std::pair<std::string, json>> anthropic_events(const std::string& body) {
  std::vector<std::pair<std::string, json>> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    const std::string e = body.substr(pos, end - pos);
    const size_t nl = e.find('\n');
    EXPECT_EQ(e.rfind("event: ", 0), 0u) << e;
    EXPECT_EQ(e.compare(nl + 1, 6, "data: "), 0) << e;
    out.emplace_back(e.substr(7, nl - 7), json::parse(e.substr(nl + 7)));
    pos = end + 2;
  }
  return out;
}

TEST(AnthropicRequest, ReadsBlocksToolsAndThinking) {
  const OpenaiRequest r = parse_anthropic_request(R"({
    "model": "m", "max_tokens": 50, "system": [{"type": "text", "text": "Be brief."}],
    "stop_sequences": ["END"], "temperature": 0, "top_k": 5,
    "thinking": {"type": "enabled", "budget_tokens": 64},
    "tools": [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
    "messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": ""},
                                        {"type": "text", "text": "Let me look."},
                                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "21 C"}]},
                                   {"type": "text", "text": "Thanks"}]}]})");
  EXPECT_EQ(r.api, Api::kAnthropic);
  EXPECT_EQ(r.max_tokens, 50);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r.sampling.top_k, 5);
  EXPECT_EQ(r.reasoning_budget, 64);
  EXPECT_EQ(r.enable_thinking, true);
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].function["parameters"]["properties"]["city"]["type"], "string");
  EXPECT_EQ(r.tool_choice.mode, chat::ToolChoice::Mode::kRequired);
  EXPECT_FALSE(r.parallel_tool_calls);
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "Be brief.");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[2].content, "Let me look.");  // the thinking block is dropped
  ASSERT_EQ(r.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(json::parse(r.messages[2].tool_calls[0].arguments), json({{"city", "Paris"}}));
  EXPECT_EQ(r.messages[3].role, "tool");
  EXPECT_EQ(r.messages[3].tool_call_id, "toolu_1");
  EXPECT_EQ(r.messages[3].content, "21 C");
  EXPECT_EQ(r.messages[4].content, "Thanks");
}

TEST(AnthropicRequest, RefusesWhatItCannotHonour) {
  auto param_of = [](const std::string& body) -> std::string {
    try {
      parse_anthropic_request(body);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.param;
    }
    return "accepted";
  };
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}]})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": []})"), "messages");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]})"), "messages[0].role");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}]})"),
            "messages[0].content[0].tool_use_id");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})"),
            "messages[0].content[0].type");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web_search_20250305", "name": "w"}]})"),
            "tools[0].type");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "thinking": {"type": "enabled", "budget_tokens": -1}})"),
            "budget_tokens");
  EXPECT_EQ(param_of(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "tool", "name": "f"}})"),
            "tool_choice.name");
}

TEST(ServeAnthropic, MessageBodyAndErrors) {
  FakeConfig cfg;
  cfg.pieces = {"Hello", " there", "END", "!"};
  FakeBackend backend(cfg);
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/messages",
                       {{"model", "fake-model"}, {"max_tokens", 20}, {"stop_sequences", {"END"}},
                        {"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json m = json::parse(res->body);
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(m["content"], json::parse(R"([{"type": "text", "text": "Hello there"}])"));
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
  EXPECT_EQ(m["usage"]["output_tokens"], 3);
  EXPECT_GT(m["usage"]["input_tokens"].get<int>(), 0);

  // max_tokens reached; count_tokens counts what the request would run.
  res = post_json(client, "/v1/messages", {{"max_tokens", 1}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  EXPECT_EQ(json::parse(res->body)["stop_reason"], "max_tokens");
  res = post_json(client, "/v1/messages/count_tokens", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["input_tokens"], m["usage"]["input_tokens"]);

  // Errors in Anthropic's shape, OpenAI's routes keep theirs.
  res = post_json(client, "/v1/messages", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  EXPECT_EQ(res->status, 400);
  json e = json::parse(res->body);
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("max_tokens"), std::string::npos);
  res = post_json(client, "/v1/messages", {{"model", "claude-x"}, {"max_tokens", 5}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "not_found_error");
  res = client.Post("/v1/messages", "{not json", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["type"], "error");
}

TEST(ServeAnthropic, ApiKeyFromEitherHeader) {
  FakeBackend backend;
  ServerConfig config = testing::test_config();
  config.api_key = "sekrit";
  TestServer server(backend, config);
  auto client = server.client();
  const json body = {{"max_tokens", 5}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  auto res = post_json(client, "/v1/messages", body);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "authentication_error");
  res = post_json(client, "/v1/messages", body, {{"x-api-key", "wrong"}});
  EXPECT_EQ(res->status, 401);
  res = post_json(client, "/v1/messages", body, {{"x-api-key", "sekrit"}});
  EXPECT_EQ(res->status, 200);
  res = post_json(client, "/v1/messages", body, {{"Authorization", "Bearer sekrit"}});
  EXPECT_EQ(res->status, 200);
}

// The scripted output of a thinking model whose prompt does not open the thinking.
FakeConfig thinking_config() {
  FakeConfig cfg;
  cfg.thinking = true;
  cfg.pieces = {"<think>", "\nThe user", " greets me.", "\n</think>", "\n\n", "Hello", "!"};
  return cfg;
}

TEST(ServeReasoning, ChatSeparatesThinkingWholeAndStreamed) {
  FakeBackend backend(thinking_config());
  TestServer server(backend);
  auto client = server.client();
  const json body = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  auto res = post_json(client, "/v1/chat/completions", body);
  ASSERT_EQ(res->status, 200) << res->body;
  json r = json::parse(res->body);
  EXPECT_EQ(r["choices"][0]["message"]["reasoning_content"], "The user greets me.");
  EXPECT_EQ(r["choices"][0]["message"]["content"], "Hello!");
  EXPECT_EQ(r["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);  // <think> ... </think>

  json streamed = body;
  streamed["stream"] = true;
  res = post_json(client, "/v1/chat/completions", streamed);
  bool framed = false;
  std::string reasoning, content;
  for (const auto& d : testing::sse_data(res->body, &framed)) {
    if (d == "[DONE]") continue;
    const json delta = json::parse(d)["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) reasoning += delta["reasoning_content"].get<std::string>();
    if (delta.contains("content")) content += delta["content"].get<std::string>();
  }
  EXPECT_EQ(reasoning, "The user greets me.");
  EXPECT_EQ(content, "Hello!");

  // --reasoning-format none, per request: all of it is content.
  json raw = body;
  raw["reasoning_format"] = "none";
  res = post_json(client, "/v1/chat/completions", raw);
  r = json::parse(res->body);
  EXPECT_FALSE(r["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_EQ(r["choices"][0]["message"]["content"], "<think>\nThe user greets me.\n</think>\n\nHello!");
  // The completions endpoint never splits.
  res = post_json(client, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 3}});
  EXPECT_EQ(json::parse(res->body)["choices"][0]["text"], "<think>\nThe user greets me.");
}

TEST(ServeReasoning, ThinkingSwitchedOffByTheTemplateIsNotSplit) {
  FakeBackend backend(thinking_config());
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/chat/completions",
                       {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                        {"chat_template_kwargs", {{"enable_thinking", false}}}});
  const json r = json::parse(res->body);
  EXPECT_FALSE(r["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_FALSE(r["usage"].contains("completion_tokens_details"));
  // The kwarg reached the template: the fake closes the thinking in the prompt.
  const auto submitted = backend.submitted();
  const std::string prompt(submitted.back().prompt.begin(), submitted.back().prompt.end());
  EXPECT_NE(prompt.find("<think></think>"), std::string::npos);
}

TEST(ServeReasoning, AnthropicThinkingBlocks) {
  FakeBackend backend(thinking_config());
  TestServer server(backend);
  auto client = server.client();
  json body = {{"max_tokens", 50}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  auto res = post_json(client, "/v1/messages", body);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["content"],
            json::parse(R"([{"type": "thinking", "thinking": "The user greets me.", "signature": ""},
                            {"type": "text", "text": "Hello!"}])"));

  body["stream"] = true;
  res = post_json(client, "/v1/messages", body);
  ASSERT_EQ(res->status, 200);
  const auto events = anthropic_events(res->body);
  std::vector<std::string> names;
  std::string thinking, text;
  for (const auto& [name, data] : events) {
    EXPECT_EQ(data["type"], name);
    if (names.empty() || names.back() != name) names.push_back(name);
    if (name == "content_block_delta") {
      if (data["delta"]["type"] == "thinking_delta") {
        EXPECT_EQ(data["index"], 0);
        thinking += data["delta"]["thinking"].get<std::string>();
      } else {
        EXPECT_EQ(data["delta"]["type"], "text_delta");
        EXPECT_EQ(data["index"], 1);
        text += data["delta"]["text"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(thinking, "The user greets me.");
  EXPECT_EQ(text, "Hello!");
  const std::vector<std::string> expected = {"message_start", "ping", "content_block_start", "content_block_delta",
                                             "content_block_stop", "content_block_start", "content_block_delta",
                                             "content_block_stop", "message_delta", "message_stop"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(events.back().first, "message_stop");
  EXPECT_EQ(events[events.size() - 2].second["delta"]["stop_reason"], "end_turn");
  EXPECT_EQ(events[events.size() - 2].second["usage"]["output_tokens"], 7);
}

}  // namespace
}  // namespace ridge
