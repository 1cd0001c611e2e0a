// Which chat format a Jinja template is. ridge does not evaluate Jinja: like llama.cpp's
// llm_chat_detect_template, it looks for marker substrings, in the same order (the order matters:
// several families share markers). Families llama.cpp knows but ridge does not render are still
// recognised, so they get a precise error instead of being mistaken for a later rule.
#include <array>
#include <string>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace ridge {
namespace {

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

// A rule matches when the template contains every non-empty needle; `family` is a llama.cpp name.
struct DetectRule {
  std::array<std::string_view, 3> needles;
  std::string_view family;
};

// Rules after the [INST] family (detect_inst_family), in llama.cpp's order.
constexpr std::array kRules = {
    DetectRule{{"<|assistant|>", "<|end|>"}, "phi3"},
    DetectRule{{"[gMASK]<sop>"}, "chatglm4"},
    DetectRule{{"<|assistant|>", "<|user|>", "<|tool_declare|>"}, "exaone-moe"},
    DetectRule{{"<|assistant|>", "<|user|>", "</s>"}, "falcon3"},
    DetectRule{{"<|assistant|>", "<|user|>"}, "glmedge"},
    DetectRule{{"<|{{ item['role'] }}|>", "<|begin_of_image|>"}, "glmedge"},
    DetectRule{{"<|user|>", "<|endoftext|>"}, "zephyr"},
    DetectRule{{"bos_token + message['role']"}, "monarch"},
    DetectRule{{"<start_of_turn>"}, "gemma"},
    DetectRule{{"'\\n\\nAssistant: ' + eos_token"}, "orion"},
    DetectRule{{"GPT4 Correct "}, "openchat"},
    DetectRule{{"USER: ", "ASSISTANT: ", "SYSTEM: "}, "vicuna-orca"},
    DetectRule{{"USER: ", "ASSISTANT: "}, "vicuna"},
    DetectRule{{"### Instruction:", "<|EOT|>"}, "deepseek"},
    DetectRule{{"<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"}, "command-r"},
    DetectRule{{"<|start_header_id|>", "<|end_header_id|>"}, "llama3"},
    DetectRule{{"[gMASK]sop"}, "chatglm3"},
    DetectRule{{"<用户>"}, "minicpm"},
    DetectRule{{"'Assistant: ' + message['content'] + eos_token"}, "deepseek2"},
    DetectRule{{"<｜Assistant｜>", "<｜User｜>", "<｜end▁of▁sentence｜>"}, "deepseek3"},
    DetectRule{{"[|system|]", "[|assistant|]", "[|tool|]"}, "exaone4"},
    DetectRule{{"[|system|]", "[|assistant|]", "[|endofturn|]"}, "exaone3"},
    DetectRule{{"rwkv-world"}, "rwkv-world"},
    DetectRule{{"{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"}, "rwkv-world"},
    DetectRule{{"<|start_of_role|>", "<tool_call>"}, "granite-4"},
    DetectRule{{"<|start_of_role|>", "<tools>"}, "granite-4"},
    DetectRule{{"<|start_of_role|>"}, "granite"},
    DetectRule{{"message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"},
               "gigachat"},
    DetectRule{{"<|role_start|>"}, "megrez"},
    DetectRule{{" Ассистент:"}, "yandex"},
    DetectRule{{"<role>ASSISTANT</role>", "'HUMAN'"}, "bailing"},
    DetectRule{{"<role>ASSISTANT</role>", "\"HUMAN\"", "<think>"}, "bailing-think"},
    DetectRule{{"<role>ASSISTANT</role>", "<role>HUMAN</role>", "<|role_end|>"}, "bailing2"},
    DetectRule{{"<|header_start|>", "<|header_end|>"}, "llama4"},
    DetectRule{{"<|endofuserprompt|>"}, "dots1"},
    DetectRule{{"<|extra_0|>", "<|extra_4|>"}, "hunyuan-moe"},
    DetectRule{{"<|start|>", "<|channel|>"}, "gpt-oss"},
    DetectRule{{"<｜hy_Assistant｜>", "<｜hy_begin▁of▁sentence｜>"}, "hunyuan-vl"},
    DetectRule{{"<｜hy_Assistant｜>", "<｜hy_place▁holder▁no▁3｜>"}, "hunyuan-dense"},
    DetectRule{{"<|im_assistant|>assistant<|im_middle|>"}, "kimi-k2"},
    DetectRule{{"<seed:bos>"}, "seed_oss"},
    DetectRule{{"'Assistant: '  + message['content'] + '<|separator|>"}, "grok-2"},
    DetectRule{{"[unused9]系统：[unused10]"}, "pangu-embedded"},
    DetectRule{{"<|begin|>", "<|end|>", "<|content|>"}, "solar-open"},
};

bool matches(std::string_view tmpl, const DetectRule& rule) {
  for (auto needle : rule.needles)
    if (!needle.empty() && !contains(tmpl, needle)) return false;
  return true;
}

// Mistral and Llama 2 share [INST]; the variants differ in spaces, BOS and stripping.
std::string_view detect_inst_family(std::string_view tmpl) {
  if (contains(tmpl, "[SYSTEM_PROMPT]")) return "mistral-v7";
  // The official Mistral v1 template, and v3 / v3-tekken (which know tools).
  if (contains(tmpl, "' [INST] ' + system_message") || contains(tmpl, "[AVAILABLE_TOOLS]")) {
    if (contains(tmpl, " [INST]")) return "mistral-v1";
    if (contains(tmpl, "\"[INST]\"")) return "mistral-v3-tekken";
    return "mistral-v3";
  }
  if (contains(tmpl, "content.strip()")) return "llama2-sys-strip";
  if (contains(tmpl, "bos_token + '[INST]")) return "llama2-sys-bos";
  if (contains(tmpl, "<<SYS>>")) return "llama2-sys";
  return "llama2";
}

// The llama.cpp family name of a template, or "" when no rule matches.
std::string_view detect_family(std::string_view tmpl) {
  if (chat_format_from_name(tmpl)) return tmpl;
  if (contains(tmpl, "<|im_start|>")) {
    if (contains(tmpl, "<|im_sep|>")) return "phi4";
    if (contains(tmpl, "<end_of_utterance>")) return "smolvlm";  // <|im_start|> is only its BOS
    return "chatml";
  }
  if (tmpl.starts_with("mistral") || contains(tmpl, "[INST]")) return detect_inst_family(tmpl);
  for (const auto& rule : kRules)
    if (matches(tmpl, rule)) return rule.family;
  return "";
}

std::string supported_names() {
  std::string names;
  for (auto name : chat_format_names()) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

// A Jinja string literal's "\n" may be a real newline or the two characters backslash-n.
size_t skip_newline(std::string_view text, size_t pos) {
  if (text.substr(pos).starts_with("\n")) return pos + 1;
  if (text.substr(pos).starts_with("\\n")) return pos + 2;
  return std::string_view::npos;
}

std::string unescape_newlines(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

ChatFormat detect_chat_format(std::string_view jinja_template) {
  const std::string_view family = detect_family(jinja_template);
  if (family.empty())
    fail("unknown chat template (not one of the families ridge recognises); pass --chat-template NAME, one of: {}",
         supported_names());
  const auto format = chat_format_from_name(family);
  if (!format)
    fail("chat template looks like the '{}' format, which ridge does not render; pass --chat-template NAME, one of: {}",
         family, supported_names());
  return *format;
}

// ChatML templates such as SmolLM2's and Qwen2's print a fixed system turn when the conversation
// starts without one: `'<|im_start|>system\nYou are ...<|im_end|>\n'`. The prompt is taken only when
// it is a plain literal (no quote or Jinja syntax before <|im_end|>), so a template that prints the
// user's own system message is never mistaken for one with a default.
std::string detect_default_system_prompt(std::string_view jinja_template, ChatFormat format) {
  if (format != ChatFormat::ChatML) return "";
  if (!contains(jinja_template, "!= 'system'") && !contains(jinja_template, "== 'system'")) return "";
  constexpr std::string_view kHeader = "<|im_start|>system";
  for (size_t at = jinja_template.find(kHeader); at != std::string_view::npos;
       at = jinja_template.find(kHeader, at + 1)) {
    const size_t start = skip_newline(jinja_template, at + kHeader.size());
    if (start == std::string_view::npos) continue;
    const size_t end = jinja_template.find("<|im_end|>", start);
    if (end == std::string_view::npos) continue;
    const std::string_view body = jinja_template.substr(start, end - start);
    if (body.empty() || body.find_first_of("'\"{}%") != std::string_view::npos) continue;
    return unescape_newlines(body);
  }
  return "";
}

ChatTemplate select_chat_template(const std::optional<std::string>& jinja_template, std::string_view override_name) {
  if (!override_name.empty()) {
    const auto format = chat_format_from_name(override_name);
    // As llama.cpp's --chat-template: a Jinja template's text is taken as the template itself.
    if (!format && (override_name.find("{{") != std::string_view::npos || override_name.find("{%") != std::string_view::npos))
      return chat_template_from_jinja(std::string(override_name));
    if (!format) fail("unknown --chat-template '{}'; one of: {}", override_name, supported_names());
    return {*format, "", ""};
  }
  if (!jinja_template || jinja_template->empty())
    fail("the model has no tokenizer.chat_template; pass --chat-template NAME, one of: {}", supported_names());
  return chat_template_from_jinja(*jinja_template);
}

}  // namespace ridge
