// Tool calling's pieces: Python-style JSON, scanning growing JSON, each format's parser on whole and
// partial outputs, the streamed deltas (their concatenation is the final content and arguments,
// however the text is cut), and the call grammars (they accept exactly well-formed calls).
#include <gtest/gtest.h>

#include "chat/json_scan.h"
#include "chat/python_json.h"
#include "chat/tool_call_stream.h"
#include "chat/tool_format.h"
#include "grammar/recognize.h"

namespace ridge::chat {
namespace {

using Status = Scan::Status;

Tool weather_tool() {
  Tool t;
  t.name = "get_weather";
  t.parameters = Json::parse(R"({"type": "object", "properties": {"city": {"type": "string"},
      "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city"], "additionalProperties": false})");
  t.function = Json{{"name", t.name}, {"description", "Weather."}, {"parameters", t.parameters}};
  t.definition = Json{{"type", "function"}, {"function", t.function}};
  return t;
}

TEST(PythonJson, MatchesJsonDumps) {
  const Json v = Json::parse(R"({"b": [1, 2.5, 1.0, true, null, "é\"\n\u0001"], "a": {}, "c": []})");
  EXPECT_EQ(python_json(v), R"({"b": [1, 2.5, 1.0, true, null, "é\"\n\u0001"], "a": {}, "c": []})");
  EXPECT_EQ(python_json(Json::parse(R"({"a": [1, {"b": 2}]})"), 2), "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ]\n}");
}

TEST(JsonScan, FindsValueEndsInGrowingText) {
  EXPECT_EQ(scan_json_value(R"({"a": "}"} tail)", 0).end, 10u);
  EXPECT_EQ(scan_json_value(R"({"a": [1, {)", 0).status, Status::kIncomplete);
  EXPECT_EQ(scan_json_value("12", 0).status, Status::kIncomplete);  // more digits may follow
  EXPECT_EQ(scan_json_value("12,", 0).status, Status::kComplete);
  EXPECT_EQ(scan_json_value("tru", 0).status, Status::kIncomplete);
  EXPECT_EQ(scan_json_value("trux ", 0).status, Status::kInvalid);
  EXPECT_EQ(scan_json_value(R"({"a" 1})", 0).status, Status::kInvalid);
  const ObjectScan o = scan_json_object(R"({"name": "f", "arguments": {"x": [1)", 0);
  ASSERT_EQ(o.members.size(), 2u);
  EXPECT_EQ(o.members[0].key, "name");
  EXPECT_EQ(o.members[1].value.status, Status::kIncomplete);
}

TEST(ToolFormats, QwenParsesContentAndCalls) {
  const auto f = make_tool_format("qwen2.5");
  const ParsedOutput out = f->parse(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
      true);
  EXPECT_EQ(out.content, "Let me check.\n");
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_TRUE(out.calls[1].done);
  // A marker followed by something that is not a call stays text.
  EXPECT_EQ(f->parse("a <tool_call> b", true).content, "a <tool_call> b");
  // A partial marker is held back only while more may come.
  EXPECT_EQ(f->parse("Hello <tool_c", false).content, "Hello ");
  EXPECT_EQ(f->parse("Hello <tool_c", true).content, "Hello <tool_c");
}

TEST(ToolFormats, Llama3AndMistralParse) {
  const auto llama = make_tool_format("llama3");
  ParsedOutput out = llama->parse(R"( {"name": "get_weather", "parameters": {"city": "Oslo"}})", true);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, R"({"city": "Oslo"})");
  EXPECT_EQ(llama->parse(R"({"answer": 1})", true).content, R"({"answer": 1})");
  EXPECT_TRUE(llama->parse(R"({"na)", false).content.empty());  // could still be a call
  const auto mistral = make_tool_format("mistral");
  out = mistral->parse(R"([TOOL_CALLS][{"name": "a", "arguments": {"x": 1}, "id": "abcDEF123"}, {"name": "b", "arguments": {}}])", true);
  ASSERT_EQ(out.calls.size(), 2u);
  EXPECT_EQ(out.calls[1].name, "b");
  EXPECT_EQ(mistral->new_call_id().size(), 9u);
}

// Cut the text at every position into two pushes (and token-sized pieces): the deltas always add up.
TEST(ToolCallStream, DeltasAddUpToTheFinalOutput) {
  const std::string text =
      "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa\\\"ris\", \"days\": 3}}\n</tool_call>";
  const auto f = make_tool_format("qwen2.5");
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ToolCallStream stream(*f, {"get_weather"});
    std::string content, arguments, name;
    int opens = 0;
    for (const StreamDelta& d : {stream.push(text.substr(0, cut), false), stream.push(text.substr(cut), true)}) {
      content += d.content;
      for (const CallDelta& c : d.calls) {
        EXPECT_EQ(c.index, 0u);
        if (c.opens) ++opens, name = c.name;
        arguments += c.arguments;
      }
    }
    EXPECT_EQ(content, "Sure.\n") << cut;
    EXPECT_EQ(opens, 1) << cut;
    EXPECT_EQ(name, "get_weather");
    EXPECT_EQ(arguments, R"({"city": "Pa\"ris", "days": 3})") << cut;
    ASSERT_EQ(stream.calls().size(), 1u);
    EXPECT_EQ(stream.calls()[0].arguments, arguments);
  }
}

TEST(ToolCallStream, BareObjectCountsOnlyForAnOfferedTool) {
  const auto f = make_tool_format("qwen2.5");
  const std::string call = R"({"name": "get_weather", "arguments": {"city": "Rome"}})";
  ToolCallStream offered(*f, {"get_weather"});
  for (char c : call) offered.push(std::string(1, c), false);
  offered.push("", true);
  ASSERT_EQ(offered.calls().size(), 1u);
  EXPECT_EQ(offered.calls()[0].arguments, R"({"city": "Rome"})");
  EXPECT_TRUE(offered.content().empty());
  ToolCallStream other(*f, {"get_time"});  // a JSON answer that happens to have a "name"
  std::string content;
  for (char c : call) content += other.push(std::string(1, c), false).content;
  content += other.push("", true).content;
  EXPECT_EQ(content, call);
  EXPECT_TRUE(other.calls().empty());
}

TEST(ToolFormats, CallGrammarsAcceptExactlyWellFormedCalls) {
  const std::vector<Tool> tools = {weather_tool()};
  const auto accepts = [&](std::string_view format, bool parallel, std::string_view text) {
    return grammar::grammar_accepts(grammar::build_grammar(make_tool_format(format)->calls_grammar(tools, parallel)), text);
  };
  const std::string one = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>";
  EXPECT_TRUE(accepts("qwen2.5", false, one));
  EXPECT_FALSE(accepts("qwen2.5", false, one + "\n" + one));
  EXPECT_TRUE(accepts("qwen2.5", true, one + "\n" + one));
  EXPECT_FALSE(accepts("qwen2.5", false, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 2}}\n</tool_call>"));
  EXPECT_FALSE(accepts("qwen2.5", false, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P\", \"days\": 9}}\n</tool_call>"));
  EXPECT_FALSE(accepts("qwen2.5", false, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"P\"}}\n</tool_call>"));
  EXPECT_TRUE(accepts("llama3", false, R"({"name": "get_weather", "parameters": {"city": "Oslo"}})"));
  EXPECT_TRUE(accepts("mistral", true,
                      R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "A"}}, {"name": "get_weather", "arguments": {"city": "B"}}])"));
}

TEST(ToolFormats, TemplatesRefuseWhatTheirJinjaRefuses) {
  std::vector<ChatMessage> two_calls = {{"user", "hi", {}, {}}, {"assistant", "", {{"a", "f", "{}"}, {"b", "g", "{}"}}, {}}};
  EXPECT_THROW(make_tool_format("llama3")->render(two_calls, {}, {}), Error);  // one call per turn
  std::vector<ChatMessage> short_id = {{"user", "hi", {}, {}}, {"assistant", "", {{"a", "f", "{}"}}, {}}};
  EXPECT_THROW(make_tool_format("mistral")->render(short_id, {}, {}), Error);  // ids of 9
  EXPECT_EQ(make_tool_format("nope"), nullptr);
  EXPECT_THROW(select_tool_format("", ChatFormat::ChatML, "nope"), Error);
  EXPECT_EQ(select_tool_format("", ChatFormat::Llama2, ""), nullptr);
  EXPECT_EQ(select_tool_format("", ChatFormat::ChatML, "")->name(), "qwen2.5");
}

}  // namespace
}  // namespace ridge::chat
