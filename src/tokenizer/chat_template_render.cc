// Rendering a conversation in a fixed chat format. The text of each format is byte-for-byte what
// llama.cpp's llama_chat_apply_template produces for it (tests/conformance/test_chat_template.py
// checks that), including its quirks: which formats trim contents, where a system message goes in a
// format that has none, and which formats have no generation prompt at all.
#include <cctype>
#include <string>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace ridge {
namespace {

using Messages = std::span<const ChatMessage>;

// Whitespace as C's isspace in the "C" locale; UTF-8 bytes are never whitespace.
std::string trim(std::string_view text) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t begin = 0, end = text.size();
  while (begin < end && space(text[begin])) ++begin;
  while (end > begin && space(text[end - 1])) --end;
  return std::string(text.substr(begin, end - begin));
}

// Formats where every message is `open + role + mid + content + close`, whatever the role.
struct WrappedFormat {
  ChatFormat format;
  std::string_view open, mid, close;
  bool trim_content;
  std::string_view generation_prompt;
};

constexpr WrappedFormat kWrappedFormats[] = {
    {ChatFormat::ChatML, "<|im_start|>", "\n", "<|im_end|>\n", false, "<|im_start|>assistant\n"},
    {ChatFormat::Phi3, "<|", "|>\n", "<|end|>\n", false, "<|assistant|>\n"},
    {ChatFormat::Phi4, "<|im_start|>", "<|im_sep|>", "<|im_end|>", false, "<|im_start|>assistant<|im_sep|>"},
    {ChatFormat::Falcon3, "<|", "|>\n", "\n", false, "<|assistant|>\n"},
    {ChatFormat::Zephyr, "<|", "|>\n", "<|endoftext|>\n", false, "<|assistant|>\n"},
    {ChatFormat::Llama3, "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", true,
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {ChatFormat::Llama4, "<|header_start|>", "<|header_end|>\n\n", "<|eot|>", true,
     "<|header_start|>assistant<|header_end|>\n\n"},
    {ChatFormat::Megrez, "<|role_start|>", "<|role_end|>", "<|turn_end|>", false, "<|role_start|>assistant<|role_end|>"},
};

const WrappedFormat* find_wrapped(ChatFormat format) {
  for (const auto& wrapped : kWrappedFormats)
    if (wrapped.format == format) return &wrapped;
  return nullptr;
}

void render_wrapped(const WrappedFormat& f, Messages messages, bool add_generation_prompt, std::string& out) {
  for (const auto& m : messages) {
    out += f.open;
    out += m.role;
    out += f.mid;
    out += f.trim_content ? trim(m.content) : m.content;
    out += f.close;
  }
  if (add_generation_prompt) out += f.generation_prompt;
}

// Formats that print a fixed text around each message by role: system, user, assistant, other.
// Messages with any other role are dropped, as llama.cpp does for these formats.
struct RoleFormat {
  ChatFormat format;
  std::string_view system_open, system_close;
  std::string_view user_open, user_close;
  std::string_view assistant_open, assistant_close;
  bool trim_content;
  std::string_view generation_prompt;
};

constexpr RoleFormat kRoleFormats[] = {
    {ChatFormat::Vicuna, "", "\n\n", "USER: ", "\n", "ASSISTANT: ", "</s>\n", false, "ASSISTANT:"},
    {ChatFormat::VicunaOrca, "SYSTEM: ", "\n", "USER: ", "\n", "ASSISTANT: ", "</s>\n", false, "ASSISTANT:"},
    {ChatFormat::DeepSeek, "", "", "### Instruction:\n", "\n", "### Response:\n", "\n<|EOT|>\n", false, "### Response:\n"},
    {ChatFormat::DeepSeek2, "", "\n\n", "User: ", "\n\n", "Assistant: ", "<｜end▁of▁sentence｜>", false, "Assistant:"},
    {ChatFormat::DeepSeek3, "", "\n\n", "<｜User｜>", "", "<｜Assistant｜>", "<｜end▁of▁sentence｜>", false, "<｜Assistant｜>"},
    {ChatFormat::CommandR, "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
     "<|END_OF_TURN_TOKEN|>", true, "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {ChatFormat::Exaone3, "[|system|]", "[|endofturn|]\n", "[|user|]", "\n", "[|assistant|]", "[|endofturn|]\n", true,
     "[|assistant|]"},
};

const RoleFormat* find_role_format(ChatFormat format) {
  for (const auto& f : kRoleFormats)
    if (f.format == format) return &f;
  return nullptr;
}

void render_by_role(const RoleFormat& f, Messages messages, bool add_generation_prompt, std::string& out) {
  for (const auto& m : messages) {
    std::string_view open, close;
    if (m.role == "system") {
      open = f.system_open, close = f.system_close;
    } else if (m.role == "user") {
      open = f.user_open, close = f.user_close;
    } else if (m.role == "assistant") {
      open = f.assistant_open, close = f.assistant_close;
    } else {
      continue;
    }
    out += open;
    out += f.trim_content ? trim(m.content) : m.content;
    out += close;
  }
  if (add_generation_prompt) out += f.generation_prompt;
}

// Llama 2: "[INST] user [/INST]answer</s>[INST] ..."; no generation prompt (the prompt already ends
// inside an open turn). The variants add a <<SYS>> block, a <s> before later turns, or stripping.
void render_llama2(ChatFormat format, Messages messages, std::string& out) {
  const bool system_block = format != ChatFormat::Llama2;
  const bool bos_inside = format == ChatFormat::Llama2SysBos;
  const bool strip = format == ChatFormat::Llama2SysStrip;
  bool inside_turn = true;  // the first [INST] is written up front
  out += "[INST] ";
  for (const auto& m : messages) {
    const std::string content = strip ? trim(m.content) : m.content;
    if (!inside_turn) {
      inside_turn = true;
      out += bos_inside ? "<s>[INST] " : "[INST] ";
    }
    if (m.role == "system") {
      out += system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
    } else if (m.role == "user") {
      out += content + " [/INST]";
    } else {
      out += content + "</s>";
      inside_turn = false;
    }
  }
}

// Mistral v1 / v3 / v3-tekken: system text goes inside the next [INST]; no generation prompt.
void render_mistral(ChatFormat format, Messages messages, std::string& out) {
  const std::string_view lead = format == ChatFormat::MistralV1 ? " " : "";
  const std::string_view trail = format == ChatFormat::MistralV3Tekken ? "" : " ";
  const bool trim_answer = format == ChatFormat::Mistral;
  bool inside_turn = false;
  for (const auto& m : messages) {
    if (!inside_turn) {
      out += lead;
      out += "[INST]";
      out += trail;
      inside_turn = true;
    }
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += m.content;
      out += lead;
      out += "[/INST]";
    } else {
      out += trail;
      out += trim_answer ? trim(m.content) : m.content;
      out += "</s>";
      inside_turn = false;
    }
  }
}

// Mistral v7: the system prompt has its own tags; no generation prompt.
void render_mistral_v7(ChatFormat format, Messages messages, std::string& out) {
  const std::string_view space = format == ChatFormat::MistralV7 ? " " : "";
  for (const auto& m : messages) {
    if (m.role == "system") {
      out += "[SYSTEM_PROMPT]" + std::string(space) + m.content + "[/SYSTEM_PROMPT]";
    } else if (m.role == "user") {
      out += "[INST]" + std::string(space) + m.content + "[/INST]";
    } else {
      out += std::string(space) + m.content + "</s>";
    }
  }
}

// Gemma has no system role: system text (trimmed) opens the next user turn; "assistant" is "model".
void render_gemma(Messages messages, bool add_generation_prompt, std::string& out) {
  std::string system_prompt;
  for (const auto& m : messages) {
    if (m.role == "system") {
      system_prompt += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n";
    if (!system_prompt.empty() && role != "model") {
      out += system_prompt + "\n\n";
      system_prompt.clear();
    }
    out += trim(m.content) + "<end_of_turn>\n";
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
}

// Orion has no system role either, and no generation prompt: each user turn ends with the answer header.
void render_orion(Messages messages, std::string& out) {
  std::string system_prompt;
  for (const auto& m : messages) {
    if (m.role == "system") {
      system_prompt += m.content;
    } else if (m.role == "user") {
      out += "Human: ";
      if (!system_prompt.empty()) {
        out += system_prompt + "\n\n";
        system_prompt.clear();
      }
      out += m.content + "\n\nAssistant: </s>";
    } else {
      out += m.content + "</s>";
    }
  }
}

// Monarch: "role\ncontent</s>\n", with <s> before every message but the first.
void render_monarch(Messages messages, bool add_generation_prompt, std::string& out) {
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += "<s>";
    out += messages[i].role + "\n" + messages[i].content + "</s>\n";
  }
  if (add_generation_prompt) out += "<s>assistant\n";
}

// OpenChat: "GPT4 Correct User: ..."; the system message is bare.
void render_openchat(Messages messages, bool add_generation_prompt, std::string& out) {
  for (const auto& m : messages) {
    if (m.role == "system") {
      out += m.content + "<|end_of_turn|>";
      continue;
    }
    std::string role = m.role;
    if (!role.empty()) role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
    out += "GPT4 Correct " + role + ": " + m.content + "<|end_of_turn|>";
  }
  if (add_generation_prompt) out += "GPT4 Correct Assistant:";
}

// Granite 3.x: role headers; a tool call from the assistant is marked inside its turn.
void render_granite(Messages messages, bool add_generation_prompt, std::string& out) {
  for (const auto& m : messages) {
    out += "<|start_of_role|>" + m.role + "<|end_of_role|>";
    if (m.role == "assistant_tool_call") out += "<|tool_call|>";
    out += m.content + "<|end_of_text|>\n";
  }
  if (add_generation_prompt) out += "<|start_of_role|>assistant<|end_of_role|>";
}

// SmolVLM: <|im_start|> is its BOS, the turns are "User: ... <end_of_utterance>".
void render_smolvlm(Messages messages, bool add_generation_prompt, std::string& out) {
  out += "<|im_start|>";
  for (const auto& m : messages) {
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += "User: " + m.content + "<end_of_utterance>\n";
    } else {
      out += "Assistant: " + m.content + "<end_of_utterance>\n";
    }
  }
  if (add_generation_prompt) out += "Assistant:";
}

void render_messages(ChatFormat format, Messages messages, bool gen, std::string& out) {
  if (const auto* wrapped = find_wrapped(format)) return render_wrapped(*wrapped, messages, gen, out);
  if (const auto* by_role = find_role_format(format)) return render_by_role(*by_role, messages, gen, out);
  switch (format) {
    case ChatFormat::Llama2:
    case ChatFormat::Llama2Sys:
    case ChatFormat::Llama2SysBos:
    case ChatFormat::Llama2SysStrip: return render_llama2(format, messages, out);
    case ChatFormat::Mistral:
    case ChatFormat::MistralV1:
    case ChatFormat::MistralV3Tekken: return render_mistral(format, messages, out);
    case ChatFormat::MistralV7:
    case ChatFormat::MistralV7Tekken: return render_mistral_v7(format, messages, out);
    case ChatFormat::Gemma: return render_gemma(messages, gen, out);
    case ChatFormat::Orion: return render_orion(messages, out);
    case ChatFormat::Monarch: return render_monarch(messages, gen, out);
    case ChatFormat::OpenChat: return render_openchat(messages, gen, out);
    case ChatFormat::Granite: return render_granite(messages, gen, out);
    case ChatFormat::SmolVLM: return render_smolvlm(messages, gen, out);
    default: fail("chat format '{}' has no renderer", chat_format_name(format));
  }
}

}  // namespace

std::string render_chat(ChatFormat format, std::span<const ChatMessage> messages, const ChatTemplateOptions& options) {
  std::string out;
  // A template's default system prompt applies only when the conversation has no system turn.
  const bool add_default = !options.default_system_prompt.empty() && !messages.empty() && messages[0].role != "system";
  if (!add_default) {
    render_messages(format, messages, options.add_generation_prompt, out);
    return out;
  }
  std::vector<ChatMessage> with_system;
  with_system.reserve(messages.size() + 1);
  with_system.push_back(ChatMessage{"system", options.default_system_prompt, {}, {}});
  with_system.insert(with_system.end(), messages.begin(), messages.end());
  render_messages(format, with_system, options.add_generation_prompt, out);
  return out;
}

}  // namespace ridge
