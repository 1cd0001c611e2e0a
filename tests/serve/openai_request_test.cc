// Parsing the completion request bodies: every accepted shape of prompt, messages and stop, the
// defaults, and an ApiError naming the field for each kind of mistake.
#include "serve/openai_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/api_error.h"

namespace ridge {
namespace {

using nlohmann::json;

OpenaiRequest completion(const json& body) { return parse_openai_request(Endpoint::Completions, body.dump()); }
OpenaiRequest chat(const json& body) { return parse_openai_request(Endpoint::ChatCompletions, body.dump()); }

// The ApiError a body raises (status 0 when it parses).
ApiError error_of(Endpoint endpoint, const std::string& body) {
  try {
    parse_openai_request(endpoint, body);
  } catch (const ApiError& e) {
    return e;
  }
  return ApiError(0, "parsed");
}
ApiError completion_error(const json& body) { return error_of(Endpoint::Completions, body.dump()); }
ApiError chat_error(const json& body) { return error_of(Endpoint::ChatCompletions, body.dump()); }

const json kMessages = json::array({{{"role", "user"}, {"content", "Hi"}}});

TEST(OpenaiRequest, PromptShapes) {
  auto r = completion({{"prompt", "Once upon"}});
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0].text, "Once upon");
  EXPECT_FALSE(r.prompts[0].is_tokens);
  EXPECT_EQ(completion({{"prompt", {"one string"}}}).prompts[0].text, "one string");
  r = completion({{"prompt", {1, 2, 3}}});
  EXPECT_TRUE(r.prompts[0].is_tokens);
  EXPECT_EQ(r.prompts[0].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(completion({{"prompt", {{4, 5}}}}).prompts[0].tokens, (std::vector<int32_t>{4, 5}));
  // A batch: strings, or token lists, or both.
  r = completion({{"prompt", json::array({"a", json::array({7, 8}), "c"})}, {"echo", true}, {"prompt_logprobs", 2}});
  ASSERT_EQ(r.prompts.size(), 3u);
  EXPECT_EQ(r.prompts[1].tokens, (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(r.prompts[2].text, "c");
  EXPECT_TRUE(r.echo);
  EXPECT_EQ(r.prompt_logprobs, 2);
}

TEST(OpenaiRequest, PromptMistakes) {
  EXPECT_EQ(completion_error(json::object()).param, "prompt");
  EXPECT_EQ(completion_error({{"prompt", json::array()}}).param, "prompt");
  EXPECT_EQ(completion_error({{"prompt", json::array({"a", 5})}}).param, "prompt");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"echo", true}, {"stream", true}}).param, "echo");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"prompt_logprobs", 21}}).param, "prompt_logprobs");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"echo", true}}).param, "echo");
  EXPECT_EQ(completion_error({{"prompt", {1, -2}}}).param, "prompt");
  EXPECT_EQ(completion_error({{"prompt", 42}}).param, "prompt");
}

TEST(OpenaiRequest, Defaults) {
  const auto r = completion({{"prompt", "x"}});
  EXPECT_EQ(r.n, 1);
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.seed.has_value());
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.logprobs);
  EXPECT_TRUE(r.stop.empty());
}

TEST(OpenaiRequest, SamplingFields) {
  const auto r = completion({{"prompt", "x"},         {"temperature", 0},       {"top_p", 0.9},
                             {"top_k", 40},           {"min_p", 0.05},          {"presence_penalty", 0.5},
                             {"frequency_penalty", -1}, {"repetition_penalty", 1.1}, {"seed", 7},
                             {"max_tokens", 32.0},    {"n", 3},                 {"ignore_eos", true},
                             {"user", "u1"}});
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_EQ(completion({{"prompt", "x"}, {"top_k", -1}}).sampling.top_k, 0);  // -1 turns it off, as in vLLM
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, -1.0f);
  EXPECT_FLOAT_EQ(r.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.max_tokens, 32);
  EXPECT_EQ(r.n, 3);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.user, "u1");
}

TEST(OpenaiRequest, MaxCompletionTokensWins) {
  EXPECT_EQ(chat({{"messages", kMessages}, {"max_tokens", 5}, {"max_completion_tokens", 9}}).max_tokens, 9);
  EXPECT_EQ(chat({{"messages", kMessages}, {"max_tokens", 5}}).max_tokens, 5);
}

TEST(OpenaiRequest, NullMeansNotGiven) {
  const auto r = completion({{"prompt", "x"}, {"temperature", nullptr}, {"stop", nullptr}, {"n", nullptr}});
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_EQ(r.n, 1);
}

TEST(OpenaiRequest, StopStringOrList) {
  EXPECT_EQ(completion({{"prompt", "x"}, {"stop", "\n"}}).stop, (std::vector<std::string>{"\n"}));
  EXPECT_EQ(completion({{"prompt", "x"}, {"stop", {"a", "bc"}}}).stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"stop", {"a", 1}}}).param, "stop");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"stop", 3}}).param, "stop");
}

TEST(OpenaiRequest, ValuesOutOfRange) {
  struct Case {
    const char* field;
    json value;
  };
  const Case cases[] = {{"temperature", -0.1}, {"top_p", 0},           {"top_p", 1.5},           {"min_p", 2},
                        {"n", 0},              {"n", 129},             {"max_tokens", 0},        {"presence_penalty", 3},
                        {"frequency_penalty", -2.5}, {"repetition_penalty", 0}, {"logprobs", 21}, {"top_k", -2},
                        {"max_tokens", 1.5}};
  for (const auto& c : cases) {
    const ApiError e = completion_error({{"prompt", "x"}, {c.field, c.value}});
    EXPECT_EQ(e.status, 400) << c.field << "=" << c.value;
    EXPECT_EQ(e.param, c.field) << c.field << "=" << c.value;
  }
}

TEST(OpenaiRequest, WrongTypes) {
  for (const auto& [field, value] : std::vector<std::pair<const char*, json>>{
           {"temperature", "hot"}, {"n", "2"}, {"stream", 1}, {"model", 3}, {"seed", "x"}, {"ignore_eos", "yes"}, {"user", 5}}) {
    const ApiError e = completion_error({{"prompt", "x"}, {field, value}});
    EXPECT_EQ(e.status, 400) << field;
    EXPECT_EQ(e.param, field);
  }
}

TEST(OpenaiRequest, BadJsonAndUtf8) {
  EXPECT_EQ(error_of(Endpoint::Completions, "{\"prompt\": ").status, 400);
  EXPECT_EQ(error_of(Endpoint::Completions, "[1, 2]").status, 400);
  EXPECT_EQ(error_of(Endpoint::Completions, "{\"prompt\": \"a\xff\xfe\"}").status, 400);
  EXPECT_EQ(error_of(Endpoint::Completions, "{\"prompt\": \"\\ud800\"}").status, 400);  // lone surrogate
  EXPECT_EQ(error_of(Endpoint::Completions, "{\"prompt\": \"a\", \"max_tokens\": 1e400}").status, 400);  // overflows a double
  const ApiError e = error_of(Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "Hi"}], "x": -1e999})");
  EXPECT_EQ(e.status, 400);
  EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
}

TEST(OpenaiRequest, Messages) {
  const auto r = chat({{"messages",
                        {{{"role", "developer"}, {"content", "Be brief."}},
                         {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}}}},
                         {{"role", "assistant"}, {"content", nullptr}}}}});
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "a\nb");
  EXPECT_EQ(r.messages[2].content, "");
}

TEST(OpenaiRequest, MessageMistakes) {
  EXPECT_EQ(chat_error(json::object()).param, "messages");
  EXPECT_EQ(chat_error({{"messages", json::array()}}).param, "messages");
  EXPECT_EQ(chat_error({{"messages", "hi"}}).param, "messages");
  EXPECT_EQ(chat_error({{"messages", {{{"content", "hi"}}}}}).param, "messages[0].role");
  EXPECT_EQ(chat_error({{"messages", {{{"role", "wizard"}, {"content", "hi"}}}}}).param, "messages[0].role");
  EXPECT_EQ(chat_error({{"messages", {{{"role", "user"}, {"content", 5}}}}}).param, "messages[0].content");
  EXPECT_EQ(chat_error({{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}}).param,
            "messages[0].content");
}

TEST(OpenaiRequest, Logprobs) {
  auto r = completion({{"prompt", "x"}, {"logprobs", 3}});
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.sampling.top_logprobs, 3);
  r = chat({{"messages", kMessages}, {"logprobs", true}, {"top_logprobs", 20}});
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.sampling.top_logprobs, 20);
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"logprobs", true}, {"top_logprobs", 21}}).param, "top_logprobs");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"top_logprobs", 2}}).param, "top_logprobs");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"logprobs", 2}}).param, "logprobs");
}

TEST(OpenaiRequest, StreamOptions) {
  const auto r = chat({{"messages", kMessages}, {"stream", true}, {"stream_options", {{"include_usage", true}}}});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"stream_options", {{"include_usage", true}}}}).param, "stream_options");
}

TEST(OpenaiRequest, RefusesWhatItCannotHonour) {
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"best_of", 3}}).param, "best_of");
  const OpenaiRequest biased = completion({{"prompt", "x"}, {"logit_bias", {{"50256", -100}, {"7", 2.5}}}});
  EXPECT_EQ(biased.sampling.logit_bias, (std::vector<std::pair<int32_t, float>>{{50256, -100.0f}, {7, 2.5f}}));
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"logit_bias", {{"50256", -101}}}}).param, "logit_bias");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"logit_bias", {{"abc", 1}}}}).param, "logit_bias");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"logit_bias", {{"-3", 1}}}}).param, "logit_bias");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"logit_bias", json::array({1})}}).param, "logit_bias");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"functions", json::array({{{"name", "f"}}})}}).param, "functions");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"tools", json::array({{{"type", "function"}}})}}).param, "tools");
  EXPECT_EQ(completion({{"prompt", "x"}, {"echo", false}, {"logit_bias", json::object()}, {"unknown_field", 1}}).n, 1);
}

// Found by openai_request_fuzz: a field of the wrong JSON type is a 400 naming it, never a 500.
TEST(OpenaiRequest, WrongJsonTypesInNestedFieldsAre400s) {
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"response_format", {{"type", 5}}}}).param, "response_format.type");
  EXPECT_EQ(chat_error({{"messages", json::array({{{"role", "user"}, {"content", json::array({{{"type", 1}, {"text", "x"}}})}}})}}).param,
            "messages[0].content");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"structured_outputs", {{"json_object", "yes"}}}}).param,
            "structured_outputs.json_object");
}

TEST(OpenaiRequest, ReadsToolsAndToolCalls) {
  using Mode = chat::ToolChoice::Mode;
  const json tool = {{"type", "function"}, {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}};
  EXPECT_EQ(chat({{"messages", kMessages}}).tool_choice.mode, Mode::kNone);
  const auto r = chat({{"messages", kMessages}, {"tools", json::array({tool})}});
  EXPECT_EQ(r.tool_choice.mode, Mode::kAuto);  // the default once tools are given
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].name, "f");
  EXPECT_TRUE(r.parallel_tool_calls);
  const auto named = chat({{"messages", kMessages}, {"tools", json::array({tool})}, {"parallel_tool_calls", false},
                           {"tool_choice", {{"type", "function"}, {"function", {{"name", "f"}}}}}});
  EXPECT_EQ(named.tool_choice.mode, Mode::kNamed);
  EXPECT_FALSE(named.parallel_tool_calls);
  const json history = json::array(
      {{{"role", "user"}, {"content", "hi"}},
       {{"role", "assistant"}, {"content", nullptr},
        {"tool_calls", json::array({{{"id", "c1"}, {"type", "function"},
                                     {"function", {{"name", "f"}, {"arguments", "{\"a\": 1}"}}}}})}},
       {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "42"}}});
  const auto h = chat({{"messages", history}});
  ASSERT_EQ(h.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(h.messages[1].tool_calls[0].arguments, "{\"a\": 1}");
  EXPECT_EQ(h.messages[2].tool_call_id, "c1");
  EXPECT_TRUE(h.uses_tools());
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"tool_choice", "required"}}).param, "tool_choice");
  EXPECT_EQ(chat_error({{"messages", kMessages}, {"tools", json::array({tool})}, {"tool_choice", "required"},
                        {"guided_regex", "a"}}).param, "tool_choice");
}

TEST(OpenaiRequest, ReadsStructuredOutputUnderEveryName) {
  using Kind = grammar::GrammarSpec::Kind;
  const json schema = {{"type", "object"}};
  EXPECT_EQ(chat({{"messages", kMessages}, {"response_format", {{"type", "json_object"}}}}).structured.kind, Kind::kJsonObject);
  const auto js = chat({{"messages", kMessages},
                        {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}}});
  EXPECT_EQ(js.structured.kind, Kind::kJsonSchema);
  EXPECT_EQ(json::parse(js.structured.source), schema);
  EXPECT_EQ(completion({{"prompt", "x"}, {"guided_json", schema}}).structured.kind, Kind::kJsonSchema);
  EXPECT_EQ(completion({{"prompt", "x"}, {"json_schema", schema}}).structured.kind, Kind::kJsonSchema);
  EXPECT_EQ(completion({{"prompt", "x"}, {"guided_regex", "a+"}}).structured.source, "a+");
  EXPECT_EQ(completion({{"prompt", "x"}, {"guided_choice", {"a", "b"}}}).structured.choices.size(), 2u);
  EXPECT_EQ(completion({{"prompt", "x"}, {"grammar", "root ::= \"a\""}}).structured.kind, Kind::kGbnf);
  EXPECT_EQ(completion({{"prompt", "x"}, {"structured_outputs", {{"regex", "b"}}}}).structured.kind, Kind::kRegex);
  EXPECT_EQ(completion({{"prompt", "x"}, {"guided_json", schema}, {"whitespace", "flexible"}}).structured.whitespace,
            grammar::Whitespace::kFlexible);
  EXPECT_TRUE(completion({{"prompt", "x"}, {"response_format", {{"type", "text"}}}}).structured.empty());
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"guided_json", schema}, {"guided_regex", "a"}}).param, "guided_regex");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"guided_choice", json::array()}}).param, "guided_choice");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"response_format", {{"type", "yaml"}}}}).param, "response_format.type");
  EXPECT_EQ(completion_error({{"prompt", "x"}, {"guided_json", "{bad"}}).param, "guided_json");
}

}  // namespace
}  // namespace ridge
