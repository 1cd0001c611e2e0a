// Chat through the model's Jinja template: what the template is given (messages with tool calls'
// arguments as objects, tools, kwargs, BOS / EOS), the leading BOS left to the tokenizer, and the
// fixed formats as fallbacks for templates the interpreter refuses or cannot render.
#include <gtest/gtest.h>

#include "core/error.h"
#include "template/template.h"
#include "tokenizer/chat_template.h"

namespace ridge {
namespace {

// A ChatML template in Qwen's style: recognised as ChatML by the fixed formats too.
const char* kChatml =
    "{{ bos_token }}{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

ChatTemplateOptions options_with_bos(bool tokenizer_adds_bos) {
  ChatTemplateOptions o;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  o.tokenizer_adds_bos = tokenizer_adds_bos;
  return o;
}

TEST(ChatTemplateJinja, ModelTemplateIsParsedAndRendersFirst) {
  const ChatTemplate chat = select_chat_template(std::string(kChatml), "");
  ASSERT_TRUE(chat.jinja);
  EXPECT_TRUE(chat.has_fixed_format);
  EXPECT_EQ(chat.format, ChatFormat::ChatML);
  const std::vector<ChatMessage> messages = {{"user", "Hi", {}, {}}};
  EXPECT_EQ(render_chat_template(chat, messages, options_with_bos(false)),
            "<s><|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateJinja, LeadingBosIsLeftToTheTokenizer) {
  const ChatTemplate chat = select_chat_template(std::string(kChatml), "");
  const std::vector<ChatMessage> messages = {{"user", "Hi", {}, {}}};
  const std::string prompt = render_chat_template(chat, messages, options_with_bos(true));
  EXPECT_EQ(prompt, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  // And an EOS the template ends with when the tokenizer adds one.
  const ChatTemplate eos_chat = select_chat_template(std::string("{{ messages[0].content }}{{ eos_token }}"), "");
  ChatTemplateOptions o = options_with_bos(true);
  o.tokenizer_adds_eos = true;
  EXPECT_EQ(render_chat_template(eos_chat, messages, o), "Hi");
}

TEST(ChatTemplateJinja, ToolCallArgumentsArriveAsObjectsAndToolsKeepTheirOrder) {
  const ChatTemplate chat = select_chat_template(
      std::string("{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.name }}({{ c.function.arguments.city }})"
                  "{{ c.function.arguments|tojson }}{% endfor %}{% if m.role == 'tool' %}[{{ m.tool_call_id }}:{{ m.content }}]"
                  "{% endif %}{% if m.content is none %}<null>{% endif %}{% endfor %}{{ tools|tojson }}"),
      "");
  ASSERT_TRUE(chat.jinja);
  ChatMessage call{"assistant", "", {{"call_1", "get_weather", R"({"city": "Paris", "unit": "c"})"}}, ""};
  const std::vector<ChatMessage> messages = {{"user", "Weather?", {}, {}}, call, {"tool", "sunny", {}, "call_1"}};
  ChatTemplateOptions o = options_with_bos(true);
  o.tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "get_weather", "b": 1, "a": 2}}])");
  EXPECT_EQ(render_chat_template(chat, messages, o),
            R"(get_weather(Paris){"city": "Paris", "unit": "c"}<null>[call_1:sunny])"
            R"([{"type": "function", "function": {"name": "get_weather", "b": 1, "a": 2}}])");
}

TEST(ChatTemplateJinja, KwargsReachTheTemplate) {
  const ChatTemplate chat = select_chat_template(
      std::string("{{ messages[0].content }}{% if enable_thinking is defined and not enable_thinking %} /no_think{% endif %}"), "");
  const std::vector<ChatMessage> messages = {{"user", "Hi", {}, {}}};
  ChatTemplateOptions o;
  EXPECT_EQ(render_chat_template(chat, messages, o), "Hi");
  o.kwargs["enable_thinking"] = false;
  EXPECT_EQ(render_chat_template(chat, messages, o), "Hi /no_think");
}

TEST(ChatTemplateJinja, RefusedTemplateFallsBackToItsFixedFormat) {
  const std::string text = std::string(kChatml) + "{% include 'extra.jinja' %}";
  const ChatTemplate chat = select_chat_template(text, "");
  EXPECT_FALSE(chat.jinja);
  EXPECT_NE(chat.jinja_refusal.find("include"), std::string::npos) << chat.jinja_refusal;
  EXPECT_EQ(chat.format, ChatFormat::ChatML);
  const std::vector<ChatMessage> messages = {{"user", "Hi", {}, {}}};
  EXPECT_EQ(render_chat_template(chat, messages, options_with_bos(true)), render_chat(ChatFormat::ChatML, messages, {}));
}

TEST(ChatTemplateJinja, RenderFailureFallsBackButRaiseExceptionIsTheRequestsError) {
  // A ChatML template that adds a null content to a string (as SmolLM2's does for tool-call turns).
  const ChatTemplate chat = select_chat_template(std::string(kChatml), "");
  const std::vector<ChatMessage> calls = {{"user", "Hi", {}, {}}, {"assistant", "", {{"c1", "f", "{}"}}, ""}};
  EXPECT_EQ(render_chat_template(chat, calls, options_with_bos(true)), render_chat(ChatFormat::ChatML, calls, {}));
  bool fell_back = false;
  render_chat_template(chat, calls, options_with_bos(true), [&] {
    fell_back = true;
    return std::string();
  });
  EXPECT_TRUE(fell_back);

  const ChatTemplate strict = select_chat_template(
      std::string(kChatml) + "{% if messages[0].role != 'system' %}{{ raise_exception('a system message is required') }}{% endif %}", "");
  try {
    render_chat_template(strict, std::vector<ChatMessage>{{"user", "Hi", {}, {}}}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a system message is required"), std::string::npos);
  }
}

TEST(ChatTemplateJinja, TemplateWithoutAFixedFormatIsRenderedByTheInterpreterAlone) {
  const ChatTemplate chat = select_chat_template(std::string("{% for m in messages %}{{ m.role|upper }}: {{ m.content }}\n{% endfor %}"), "");
  ASSERT_TRUE(chat.jinja);
  EXPECT_FALSE(chat.has_fixed_format);
  const std::vector<ChatMessage> messages = {{"user", "Hi", {}, {}}};
  EXPECT_EQ(render_chat_template(chat, messages, {}), "USER: Hi\n");
  // Neither renderer takes it: an error naming both problems.
  EXPECT_THROW(select_chat_template(std::string("{% include 'x' %}"), ""), Error);
}

TEST(ChatTemplateJinja, ForcedNameOrJinjaTextOverrideTheModelsTemplate) {
  const ChatTemplate named = select_chat_template(std::string(kChatml), "llama3");
  EXPECT_FALSE(named.jinja);
  EXPECT_EQ(named.format, ChatFormat::Llama3);
  const ChatTemplate text = select_chat_template(std::string(kChatml), "{{ messages[0].content }}!");
  ASSERT_TRUE(text.jinja);
  EXPECT_EQ(render_chat_template(text, std::vector<ChatMessage>{{"user", "Hi", {}, {}}}, {}), "Hi!");
}

}  // namespace
}  // namespace ridge
