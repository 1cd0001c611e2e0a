// Chat format names: llama.cpp's built-in template names, plus "mistral" for Mistral v3.
#include <array>
#include <utility>

#include "tokenizer/chat_template.h"

namespace ridge {
namespace {

struct NamedFormat {
  std::string_view name;
  ChatFormat format;
};

// The first name listed for a format is its canonical name.
constexpr std::array kNamedFormats = {
    NamedFormat{"chatml", ChatFormat::ChatML},
    NamedFormat{"llama2", ChatFormat::Llama2},
    NamedFormat{"llama2-sys", ChatFormat::Llama2Sys},
    NamedFormat{"llama2-sys-bos", ChatFormat::Llama2SysBos},
    NamedFormat{"llama2-sys-strip", ChatFormat::Llama2SysStrip},
    NamedFormat{"llama3", ChatFormat::Llama3},
    NamedFormat{"mistral", ChatFormat::Mistral},
    NamedFormat{"mistral-v3", ChatFormat::Mistral},
    NamedFormat{"mistral-v1", ChatFormat::MistralV1},
    NamedFormat{"mistral-v3-tekken", ChatFormat::MistralV3Tekken},
    NamedFormat{"mistral-v7", ChatFormat::MistralV7},
    NamedFormat{"mistral-v7-tekken", ChatFormat::MistralV7Tekken},
    NamedFormat{"gemma", ChatFormat::Gemma},
    NamedFormat{"phi3", ChatFormat::Phi3},
    NamedFormat{"phi4", ChatFormat::Phi4},
    NamedFormat{"falcon3", ChatFormat::Falcon3},
    NamedFormat{"zephyr", ChatFormat::Zephyr},
    NamedFormat{"monarch", ChatFormat::Monarch},
    NamedFormat{"orion", ChatFormat::Orion},
    NamedFormat{"openchat", ChatFormat::OpenChat},
    NamedFormat{"vicuna", ChatFormat::Vicuna},
    NamedFormat{"vicuna-orca", ChatFormat::VicunaOrca},
    NamedFormat{"deepseek", ChatFormat::DeepSeek},
    NamedFormat{"deepseek2", ChatFormat::DeepSeek2},
    NamedFormat{"deepseek3", ChatFormat::DeepSeek3},
    NamedFormat{"command-r", ChatFormat::CommandR},
    NamedFormat{"llama4", ChatFormat::Llama4},
    NamedFormat{"granite", ChatFormat::Granite},
    NamedFormat{"megrez", ChatFormat::Megrez},
    NamedFormat{"exaone3", ChatFormat::Exaone3},
    NamedFormat{"smolvlm", ChatFormat::SmolVLM},
};

}  // namespace

std::optional<ChatFormat> chat_format_from_name(std::string_view name) {
  for (const auto& entry : kNamedFormats)
    if (entry.name == name) return entry.format;
  return std::nullopt;
}

std::string_view chat_format_name(ChatFormat format) {
  for (const auto& entry : kNamedFormats)
    if (entry.format == format) return entry.name;
  return "unknown";
}

std::vector<std::string_view> chat_format_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : kNamedFormats) names.push_back(entry.name);
  return names;
}

}  // namespace ridge
