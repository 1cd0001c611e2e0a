// Chat formats: names, detection from real templates' marker text, rendering of each family's
// system handling. Byte-exact agreement with llama.cpp is checked by the conformance test.
#include "tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ridge {
namespace {

const std::vector<ChatMessage> kWithSystem = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Why?"}};
const std::vector<ChatMessage> kNoSystem = {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Why?"}};

std::string render(ChatFormat format, const std::vector<ChatMessage>& messages, bool generation_prompt = true) {
  ChatTemplateOptions options;
  options.add_generation_prompt = generation_prompt;
  return render_chat(format, messages, options);
}

TEST(ChatFormatNames, RoundTripEveryName) {
  for (auto name : chat_format_names()) {
    const auto format = chat_format_from_name(name);
    ASSERT_TRUE(format) << name;
    EXPECT_EQ(chat_format_from_name(chat_format_name(*format)), format) << name;
  }
  for (auto name : {"chatml", "llama2", "llama3", "mistral", "gemma", "phi3"})
    EXPECT_EQ(chat_format_name(*chat_format_from_name(name)), name);
  EXPECT_EQ(chat_format_from_name("mistral-v3"), ChatFormat::Mistral);
  EXPECT_FALSE(chat_format_from_name("ChatML"));
  EXPECT_FALSE(chat_format_from_name(""));
}

TEST(ChatFormatDetect, RecognisesFamiliesByMarkers) {
  const std::string smollm2 =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
      "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
  EXPECT_EQ(detect_chat_format(smollm2), ChatFormat::ChatML);
  EXPECT_EQ(detect_chat_format("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' }}"),
            ChatFormat::Llama3);
  EXPECT_EQ(detect_chat_format("{{ '<start_of_turn>' + role + '\n' }}"), ChatFormat::Gemma);
  EXPECT_EQ(detect_chat_format("{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>'}}"),
            ChatFormat::Phi3);
  EXPECT_EQ(detect_chat_format("{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}<<SYS>>"),
            ChatFormat::Llama2SysStrip);
  EXPECT_EQ(detect_chat_format("{{ '[INST] ' + message['content'] + ' [/INST]' }}"), ChatFormat::Llama2);
  EXPECT_EQ(detect_chat_format("[AVAILABLE_TOOLS]{{ '[INST]' }}"), ChatFormat::Mistral);
  EXPECT_EQ(detect_chat_format("[SYSTEM_PROMPT]{{ '[INST]' }}"), ChatFormat::MistralV7);
  EXPECT_EQ(detect_chat_format("<|im_start|>{{ role }}<|im_sep|>"), ChatFormat::Phi4);
  EXPECT_EQ(detect_chat_format("llama3"), ChatFormat::Llama3);  // a bare name is accepted too
}

TEST(ChatFormatDetect, UnknownTemplateSuggestsOverride) {
  try {
    detect_chat_format("{{ messages | tojson }}");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--chat-template"), std::string::npos) << e.what();
  }
  // Recognised by llama.cpp, not rendered by ridge: the error names the family.
  try {
    detect_chat_format("[gMASK]<sop>{{ '<|user|>' }}");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chatglm4"), std::string::npos) << e.what();
  }
}

TEST(ChatFormatDetect, DefaultSystemPromptOnlyFromPlainLiterals) {
  const std::string with_default =
      "{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are Qwen.<|im_end|>\\n' }}"
      "{% endif %}{{'<|im_start|>' + message['role']}}";
  EXPECT_EQ(detect_default_system_prompt(with_default, ChatFormat::ChatML), "You are Qwen.");
  const std::string user_system =
      "{% if messages[0]['role'] == 'system' %}{{ '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>' }}";
  EXPECT_EQ(detect_default_system_prompt(user_system, ChatFormat::ChatML), "");
  EXPECT_EQ(detect_default_system_prompt("{{'<|im_start|>' + message['role']}}", ChatFormat::ChatML), "");
}

TEST(ChatFormatSelect, OverrideWinsAndErrorsAreClear) {
  EXPECT_EQ(select_chat_template(std::nullopt, "gemma").format, ChatFormat::Gemma);
  EXPECT_EQ(select_chat_template(std::string("<|im_start|>"), "llama3").format, ChatFormat::Llama3);
  EXPECT_THROW(select_chat_template(std::nullopt, ""), Error);
  EXPECT_THROW(select_chat_template(std::string("<|im_start|>"), "nope"), Error);
}

TEST(ChatRender, ChatML) {
  EXPECT_EQ(render(ChatFormat::ChatML, kWithSystem),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render(ChatFormat::ChatML, {{"user", "Hi"}}, false), "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatRender, DefaultSystemPromptOnlyWhenNoneGiven) {
  ChatTemplateOptions options;
  options.default_system_prompt = "Default.";
  const std::vector<ChatMessage> user_only = {{"user", "Hi"}};
  EXPECT_EQ(render_chat(ChatFormat::ChatML, user_only, options),
            "<|im_start|>system\nDefault.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(ChatFormat::ChatML, kWithSystem, options).find("Default."), std::string::npos);
  EXPECT_EQ(render_chat(ChatFormat::ChatML, std::span<const ChatMessage>(), options), "<|im_start|>assistant\n");
}

TEST(ChatRender, Llama2VariantsPlaceSystemDifferently) {
  EXPECT_EQ(render(ChatFormat::Llama2, kWithSystem), "[INST] Be brief.\nHi [/INST]Hello!</s>[INST] Why? [/INST]");
  EXPECT_EQ(render(ChatFormat::Llama2Sys, kWithSystem),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s>[INST] Why? [/INST]");
  EXPECT_EQ(render(ChatFormat::Llama2SysBos, kWithSystem),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s><s>[INST] Why? [/INST]");
  EXPECT_EQ(render(ChatFormat::Llama2SysStrip, {{"user", "  Hi \n"}}), "[INST] Hi [/INST]");
}

TEST(ChatRender, Llama3TrimsContents) {
  EXPECT_EQ(render(ChatFormat::Llama3, {{"system", " S "}, {"user", "Hi\n"}}),
            "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi"
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatRender, MistralHasNoGenerationPrompt) {
  EXPECT_EQ(render(ChatFormat::Mistral, kWithSystem), "[INST] Be brief.\n\nHi[/INST] Hello!</s>[INST] Why?[/INST]");
  EXPECT_EQ(render(ChatFormat::MistralV1, kNoSystem), " [INST] Hi [/INST] Hello!</s> [INST] Why? [/INST]");
  EXPECT_EQ(render(ChatFormat::MistralV7, kWithSystem),
            "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi[/INST] Hello!</s>[INST] Why?[/INST]");
}

TEST(ChatRender, GemmaFoldsSystemIntoFirstUserTurn) {
  EXPECT_EQ(render(ChatFormat::Gemma, kWithSystem),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\nWhy?<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatRender, Phi3) {
  EXPECT_EQ(render(ChatFormat::Phi3, kWithSystem, false),
            "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n<|user|>\nWhy?<|end|>\n");
}

TEST(ChatRender, EveryFormatRenders) {
  for (auto name : chat_format_names()) {
    const ChatFormat format = *chat_format_from_name(name);
    EXPECT_FALSE(render(format, kWithSystem).empty()) << name;
  }
}

}  // namespace
}  // namespace ridge
