// Tool calling through the HTTP server on a scripted backend that writes a Qwen2.5-style call:
// tool_calls in the response with finish_reason "tool_calls", streamed deltas that add up to it,
// the prompt rendered by the backend's tool format, and the refusals (no tool format, bad fields).
#include <gtest/gtest.h>

#include "test_server.h"

namespace ridge {
namespace {

using nlohmann::json;
using testing::FakeBackend;
using testing::FakeConfig;
using testing::post_json;
using testing::TestServer;

const json kTools = json::array({{{"type", "function"},
                                  {"function", {{"name", "get_weather"},
                                                {"parameters", {{"type", "object"},
                                                                {"properties", {{"city", {{"type", "string"}}}}}}}}}}});

FakeConfig tool_config() {
  FakeConfig c;
  c.tool_format = "qwen2.5";
  c.n_ctx = 4096;
  c.pieces = {"Sure.", "<tool_call>", "\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\"", ": \"Paris\"}}\n",
              "</tool_call>"};
  return c;
}

json chat_body(json extra = json::object()) {
  json body = {{"messages", json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}})}, {"tools", kTools}};
  body.update(extra);
  return body;
}

TEST(ServeTools, ResponseCarriesToolCalls) {
  FakeBackend backend(tool_config());
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/chat/completions", chat_body());
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json choice = json::parse(res->body)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["content"], "Sure.");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  const json call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(call["function"]["arguments"], "{\"city\": \"Paris\"}");
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  // The prompt is the tool format's rendering (one byte per token in the fake); this body's keys
  // went out sorted (nlohmann::json), and the tools are printed in the order they came.
  const auto prompt = backend.submitted().at(0).prompt;
  const std::string text(prompt.begin(), prompt.end());
  EXPECT_NE(text.find("<tools>\n{\"function\": {\"name\": \"get_weather\""), std::string::npos) << text;
}

TEST(ServeTools, StreamedDeltasAddUp) {
  FakeBackend backend(tool_config());
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/chat/completions", chat_body({{"stream", true}}));
  ASSERT_TRUE(res);
  bool framed = false;
  std::string content, arguments, name, id, finish;
  for (const auto& d : testing::sse_data(res->body, &framed)) {
    if (d == "[DONE]") continue;
    const json choice = json::parse(d)["choices"][0];
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
    const json& delta = choice["delta"];
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (!delta.contains("tool_calls")) continue;
    for (const auto& c : delta["tool_calls"]) {
      EXPECT_EQ(c["index"], 0);
      if (c.contains("id")) {
        EXPECT_TRUE(id.empty()) << "one opening delta per call";
        id = c["id"], name = c["function"]["name"];
      }
      arguments += c["function"]["arguments"].get<std::string>();
    }
  }
  EXPECT_TRUE(framed);
  EXPECT_EQ(content, "Sure.");
  EXPECT_EQ(name, "get_weather");
  EXPECT_FALSE(id.empty());
  EXPECT_EQ(arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(finish, "tool_calls");
}

TEST(ServeTools, ToolChoiceNoneLeavesTheTextAlone) {
  FakeBackend backend(tool_config());
  TestServer server(backend);
  auto client = server.client();
  auto res = post_json(client, "/v1/chat/completions", chat_body({{"tool_choice", "none"}}));
  ASSERT_TRUE(res);
  const json choice = json::parse(res->body)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_FALSE(choice["message"].contains("tool_calls"));
  EXPECT_NE(choice["message"]["content"].get<std::string>().find("<tool_call>"), std::string::npos);
}

TEST(ServeTools, RefusalsNameTheField) {
  FakeBackend plain;  // no tool format
  TestServer server(plain);
  auto client = server.client();
  auto res = post_json(client, "/v1/chat/completions", chat_body());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["param"], "tools") << res->body;

  FakeBackend tools(tool_config());
  TestServer tool_server(tools);
  auto tool_client = tool_server.client();
  for (const auto& [extra, param] : std::vector<std::pair<json, std::string>>{
           {{{"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}}, "tool_choice"},
           {{{"tools", json::array({{{"type", "function"}, {"function", {{"name", "a b"}}}}})}}, "tools[0].function.name"},
           {{{"tool_choice", "required"}}, "tools"},  // this backend compiles no grammars
           {{{"messages", json::array({{{"role", "user"}, {"content", "x"}, {"tool_calls", json::array({1})}}})}},
            "messages[0].tool_calls[0]"},
       }) {
    auto r = post_json(tool_client, "/v1/chat/completions", chat_body(extra));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << extra.dump() << " " << r->body;
    EXPECT_EQ(json::parse(r->body)["error"]["param"], param) << r->body;
  }
}

}  // namespace
}  // namespace ridge
