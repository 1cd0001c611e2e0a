#pragma once
// Chat formats: turning a list of {role, content} messages into the prompt text a chat model was
// trained on. ridge does not run Jinja: it recognises the family of a GGUF's
// `tokenizer.chat_template` by substrings (as llama.cpp's llm_chat_detect_template does) and renders
// that family with fixed code that produces exactly what llama.cpp's llama_chat_apply_template does.
// The BOS token is not part of the rendered text: the tokenizer adds it.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

// A call an assistant turn made (OpenAI's tool_calls[i]); arguments is the JSON text of an object.
struct ChatToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool" (formats print other roles as given)
  std::string content;
  std::vector<ChatToolCall> tool_calls;  // assistant turns that called tools
  std::string tool_call_id;              // role "tool": the call this is the result of
};

// Names (chat_format_name) follow llama.cpp's built-in template names.
enum class ChatFormat {
  ChatML,          // SmolLM2, Qwen, Hermes: <|im_start|>role\n...<|im_end|>\n
  Llama2,          // [INST] ... [/INST]; system folded in as plain text
  Llama2Sys,       // Llama 2 with a <<SYS>> block
  Llama2SysBos,    // ... and <s> before every later [INST]
  Llama2SysStrip,  // ... and contents stripped (Meta's Llama-2-chat template)
  Llama3,          // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  Mistral,         // Mistral v3 ("mistral", "mistral-v3"): [INST] ...[/INST] answer</s>
  MistralV1,       // " [INST] ... [/INST]"
  MistralV3Tekken,
  MistralV7,       // [SYSTEM_PROMPT] ... [/SYSTEM_PROMPT][INST] ...[/INST]
  MistralV7Tekken,
  Gemma,           // <start_of_turn>user|model; system folded into the first user turn
  Phi3,            // <|role|>\n...<|end|>\n
  Phi4,
  Falcon3,
  Zephyr,
  Monarch,
  Orion,
  OpenChat,
  Vicuna,
  VicunaOrca,
  DeepSeek,
  DeepSeek2,
  DeepSeek3,
  CommandR,
  Llama4,
  Granite,         // IBM Granite 3.x
  Megrez,
  Exaone3,
  SmolVLM,
};

// "chatml", "llama2", "llama3", "mistral", "gemma", "phi3", ... (see chat_format_names()).
std::optional<ChatFormat> chat_format_from_name(std::string_view name);
std::string_view chat_format_name(ChatFormat format);
// Every name chat_format_from_name accepts, for help texts and error messages.
std::vector<std::string_view> chat_format_names();

// The family of a Jinja chat template, or of a bare format name. Error naming the problem
// (and suggesting --chat-template) when the template is not one ridge can render.
ChatFormat detect_chat_format(std::string_view jinja_template);

// The system prompt a template injects when the conversation has none (SmolLM2 does:
// "You are a helpful AI assistant named SmolLM, ..."); empty when it injects none.
std::string detect_default_system_prompt(std::string_view jinja_template, ChatFormat format);

struct ChatTemplateOptions {
  // Kept for template renderers; the fixed formats never print them (their text is llama.cpp's,
  // and the tokenizer adds BOS).
  std::string bos_token;
  std::string eos_token;
  bool add_generation_prompt = true;  // end with the header of an assistant turn
  // Placed as a leading system message when the conversation has none (see detect_default_system_prompt).
  std::string default_system_prompt;
};

std::string render_chat(ChatFormat format, std::span<const ChatMessage> messages, const ChatTemplateOptions& options);

// What a model asks for: the format (from its template, or `override_name` when given, as
// `--chat-template NAME` does) and the default system prompt of its template.
struct ChatTemplate {
  ChatFormat format = ChatFormat::ChatML;
  std::string default_system_prompt;
  std::string source;  // the Jinja template it was detected from (empty for a name): tool formats read it
};
// `jinja_template` is nullopt when the model has none. Error when neither gives a usable format.
ChatTemplate select_chat_template(const std::optional<std::string>& jinja_template, std::string_view override_name);

}  // namespace ridge
