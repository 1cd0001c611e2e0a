#pragma once
// Chat formats: turning a list of {role, content} messages into the prompt text a chat model was
// trained on. A model's Jinja `tokenizer.chat_template` is run by ridge's interpreter (src/template/)
// as transformers runs it; the fixed formats below are the fallbacks, for models without a template,
// `--chat-template NAME`, and templates the interpreter refuses. They recognise the family of a
// template by substrings (as llama.cpp's llm_chat_detect_template does) and render exactly what
// llama.cpp's llama_chat_apply_template does. The BOS token is not part of the rendered text: the
// tokenizer adds it (a Jinja template's leading BOS is removed, as llama.cpp's server does).
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ridge::tmpl {
class Template;
}

namespace ridge {

class Tokenizer;

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
  // For Jinja templates: the tools offered (OpenAI's [{"type": "function", "function": {...}}], null
  // when none), chat_template_kwargs (enable_thinking, ...), whether the tokenizer adds BOS itself (a
  // BOS the template prints first is then removed, as llama.cpp's server does), and strftime_now's clock (0: now).
  nlohmann::ordered_json tools;
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  bool tokenizer_adds_bos = true;
  bool tokenizer_adds_eos = false;  // an EOS the template prints last is then removed
  std::time_t now = 0;
};

std::string render_chat(ChatFormat format, std::span<const ChatMessage> messages, const ChatTemplateOptions& options);

// What a model asks for: the format (from its template, or `override_name` when given, as
// `--chat-template NAME` does) and the default system prompt of its template.
struct ChatTemplate {
  ChatFormat format = ChatFormat::ChatML;
  std::string default_system_prompt;
  std::string source;  // the Jinja template it was detected from (empty for a name): tool formats read it
  // The Jinja template, parsed: the primary renderer. Null for a forced format name, a model without
  // a template, or a template the interpreter refused (`jinja_refusal` names the feature).
  std::shared_ptr<const tmpl::Template> jinja;
  std::string jinja_refusal;
  bool has_fixed_format = true;  // `format` was recognised (false: a Jinja-only template)
};
// `jinja_template` is nullopt when the model has none. Error when neither gives a usable renderer.
ChatTemplate select_chat_template(const std::optional<std::string>& jinja_template, std::string_view override_name);
// A Jinja template given as text (--chat-template-file), rendered only by the interpreter; the
// fixed format detected from it, when there is one, serves tool parsing and fallbacks.
ChatTemplate chat_template_from_jinja(const std::string& jinja_template);

// bos_token / eos_token as the vocabulary spells them, and whether the tokenizer adds them itself.
void use_vocabulary_tokens(ChatTemplateOptions& options, const Tokenizer& tokenizer);

// The prompt for a conversation: through the Jinja template when there is one, else `fallback` (by
// default the fixed format, which ignores options.tools; a conversation with tools passes its tool
// format's renderer). A Jinja failure other than the template's own raise_exception falls back too,
// with a warning: a model that rendered before the interpreter still renders.
std::string render_chat_template(const ChatTemplate& chat, std::span<const ChatMessage> messages,
                                 const ChatTemplateOptions& options,
                                 const std::function<std::string()>& fallback = nullptr);
// The Jinja path alone: the context transformers gives a template (messages with tool calls'
// arguments as objects, tools, add_generation_prompt, bos_token, eos_token, the kwargs).
std::string render_jinja_chat(const tmpl::Template& jinja, std::span<const ChatMessage> messages,
                              const ChatTemplateOptions& options);

}  // namespace ridge
