// libFuzzer target for the chat template code (see fuzz/README.md). Input: a Jinja chat template,
// then optionally a NUL and a conversation: messages separated by 0x01, each a role byte (% 6:
// system, user, assistant, tool, developer, or the next bytes up to ':' as a role of its own) and
// its content. The template goes through select_chat_template / detect_chat_format /
// detect_default_system_prompt (a template ridge does not recognise is a ridge::Error); the
// conversation is rendered in every format chat_format_names() lists, with and without a
// generation prompt and the detected default system prompt. Every listed name must resolve, and a
// format that resolves must render: an Error there, or anything else escaping, aborts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tokenizer/chat_template.h"
#include "fuzz_common.h"

namespace {

using ridge::fuzz::check;

std::vector<ridge::ChatMessage> conversation(std::string_view text) {
  static constexpr const char* kRoles[] = {"system", "user", "assistant", "tool", "developer"};
  std::vector<ridge::ChatMessage> messages;
  while (!text.empty() && messages.size() < 16) {
    const size_t end = text.find('\x01');
    std::string_view m = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (m.empty()) continue;
    ridge::ChatMessage message;
    const uint8_t r = uint8_t(m[0]) % 6;
    m.remove_prefix(1);
    if (r < 5) {
      message.role = kRoles[r];
    } else {
      const size_t colon = m.find(':');
      message.role = std::string(m.substr(0, colon));
      m = colon == std::string_view::npos ? std::string_view() : m.substr(colon + 1);
    }
    message.content = std::string(m);
    if (message.role == "assistant" && message.content.starts_with("call ")) {
      message.tool_calls.push_back({"call_0", message.content.substr(5), "{}"});
    }
    if (message.role == "tool") message.tool_call_id = "call_0";
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string jinja(input.substr(0, nul));
  const std::vector<ridge::ChatMessage> messages =
      conversation(nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1));

  std::string default_system;
  try {
    const ridge::ChatTemplate t = ridge::select_chat_template(jinja, "");
    check(t.source == jinja);
    check(ridge::detect_chat_format(jinja) == t.format);
    check(ridge::detect_default_system_prompt(jinja, t.format) == t.default_system_prompt);
    check(t.default_system_prompt.empty() || t.format == ridge::ChatFormat::ChatML);
    default_system = t.default_system_prompt;
    ridge::fuzz::accepted(std::string(ridge::chat_format_name(t.format)).c_str());
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  // The Jinja interpreter: a template it parses renders the conversation or raises an Error.
  try {
    const ridge::ChatTemplate t = ridge::chat_template_from_jinja(jinja);
    if (t.jinja) (void)ridge::render_jinja_chat(*t.jinja, messages, {});
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  // Also as a bare name (--chat-template NAME): a name resolves or is an Error, never anything else.
  try {
    const ridge::ChatTemplate t = ridge::select_chat_template(std::nullopt, jinja);
    // ... or, as llama.cpp's --chat-template, Jinja text taken as the template itself.
    check(ridge::chat_format_from_name(jinja) == t.format || !t.source.empty());
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }

  for (std::string_view name : ridge::chat_format_names()) {
    const std::optional<ridge::ChatFormat> format = ridge::chat_format_from_name(name);
    check(format.has_value());
    check(ridge::chat_format_from_name(ridge::chat_format_name(*format)) == format);
    ridge::ChatTemplateOptions options;
    for (int variant = 0; variant < 3; ++variant) {
      options.add_generation_prompt = variant != 1;
      options.default_system_prompt = variant == 2 ? default_system : "";
      if (variant == 2 && default_system.empty()) options.default_system_prompt = "You are a fuzzer.";
      const std::string out = ridge::render_chat(*format, messages, options);
      volatile size_t sink = out.size();
      (void)sink;
    }
  }
  return 0;
}
