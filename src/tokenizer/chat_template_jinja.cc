// Chat through the model's own Jinja template: the context transformers (and vLLM) give it, and the
// choice between the interpreter and the fixed formats.
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "template/template.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace ridge {
namespace {

using Json = nlohmann::ordered_json;

// Tool calls' arguments go to the template as objects when they are JSON objects, as vLLM passes
// them (templates index into them or print them with tojson); other text stays a string.
tmpl::Value call_arguments(const std::string& text) {
  const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) return tmpl::from_json(parsed);
  return tmpl::Value(text);
}

tmpl::Value message_value(const ChatMessage& m) {
  tmpl::Value msg = tmpl::Value::dict();
  tmpl::Dict& d = msg.as_dict();
  d.set("role", m.role);
  // An assistant turn that only called tools has no content (OpenAI's null).
  if (m.role == "assistant" && !m.tool_calls.empty() && m.content.empty()) {
    d.set("content", tmpl::None{});
  } else {
    d.set("content", m.content);
  }
  if (!m.tool_calls.empty()) {
    std::vector<tmpl::Value> calls;
    for (const auto& call : m.tool_calls) {
      tmpl::Value function = tmpl::Value::dict();
      function.as_dict().set("name", call.name);
      function.as_dict().set("arguments", call_arguments(call.arguments));
      tmpl::Value c = tmpl::Value::dict();
      if (!call.id.empty()) c.as_dict().set("id", call.id);
      c.as_dict().set("type", "function");
      c.as_dict().set("function", function);
      calls.push_back(c);
    }
    d.set("tool_calls", tmpl::Value::list(std::move(calls)));
  }
  if (!m.tool_call_id.empty()) d.set("tool_call_id", m.tool_call_id);
  return msg;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return !prefix.empty() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return !suffix.empty() && s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ChatTemplate chat_template_from_jinja(const std::string& jinja_template) {
  ChatTemplate chat;
  chat.source = jinja_template;
  try {
    chat.jinja = std::make_shared<const tmpl::Template>(jinja_template);
  } catch (const Error& e) {
    chat.jinja_refusal = e.what();
  }
  try {
    chat.format = detect_chat_format(jinja_template);
    chat.default_system_prompt = detect_default_system_prompt(jinja_template, chat.format);
  } catch (const Error& e) {
    if (!chat.jinja) fail("{}; and the Jinja interpreter refused it: {}", e.what(), chat.jinja_refusal);
    chat.has_fixed_format = false;
  }
  if (!chat.jinja)
    log_warning("chat template: the Jinja interpreter refused the model's template ({}); using the fixed '{}' format",
                chat.jinja_refusal, chat_format_name(chat.format));
  return chat;
}

void use_vocabulary_tokens(ChatTemplateOptions& options, const Tokenizer& tokenizer) {
  if (tokenizer.bos_id() >= 0) options.bos_token = tokenizer.token_text(tokenizer.bos_id());
  if (tokenizer.eos_id() >= 0) options.eos_token = tokenizer.token_text(tokenizer.eos_id());
  options.tokenizer_adds_bos = tokenizer.add_bos();
  options.tokenizer_adds_eos = tokenizer.add_eos();
}

std::string render_jinja_chat(const tmpl::Template& jinja, std::span<const ChatMessage> messages,
                              const ChatTemplateOptions& options) {
  tmpl::Value context = tmpl::Value::dict();
  tmpl::Dict& c = context.as_dict();
  std::vector<tmpl::Value> list;
  size_t input_bytes = 0;
  for (const auto& m : messages) {
    list.push_back(message_value(m));
    input_bytes += m.content.size();
    for (const auto& call : m.tool_calls) input_bytes += call.arguments.size();
  }
  c.set("messages", tmpl::Value::list(std::move(list)));
  c.set("tools", options.tools.is_array() ? tmpl::from_json(options.tools) : tmpl::Value(tmpl::None{}));
  c.set("documents", tmpl::None{});
  c.set("add_generation_prompt", options.add_generation_prompt);
  c.set("bos_token", options.bos_token);
  c.set("eos_token", options.eos_token);
  if (options.kwargs.is_object())
    for (const auto& [key, value] : options.kwargs.items()) c.set(tmpl::Value(key), tmpl::from_json(value));
  tmpl::RenderOptions render;
  render.now = options.now;
  // Room for what the conversation brings, beside the cap on what the template adds.
  if (options.tools.is_array()) input_bytes += options.tools.dump().size();
  render.limits.max_output += 4 * input_bytes;
  std::string prompt = jinja.render(context, render);
  if (options.tokenizer_adds_bos && starts_with(prompt, options.bos_token)) prompt.erase(0, options.bos_token.size());
  if (options.tokenizer_adds_eos && ends_with(prompt, options.eos_token))
    prompt.resize(prompt.size() - options.eos_token.size());
  return prompt;
}

std::string render_chat_template(const ChatTemplate& chat, std::span<const ChatMessage> messages,
                                 const ChatTemplateOptions& options, const std::function<std::string()>& fallback) {
  if (chat.jinja) {
    try {
      return render_jinja_chat(*chat.jinja, messages, options);
    } catch (const Error& e) {
      // The template's own refusal (roles that do not alternate, ...) is the request's error.
      if (!chat.has_fixed_format || std::string_view(e.what()).rfind("template raised:", 0) == 0) throw;
      log_warning("chat template: {}; rendering this conversation in the fixed '{}' format instead", e.what(),
                  chat_format_name(chat.format));
    }
  }
  return fallback ? fallback() : render_chat(chat.format, messages, options);
}

}  // namespace ridge
