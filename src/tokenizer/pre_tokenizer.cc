// Pre-tokenizer selection by `tokenizer.ggml.pre` name, and the pass sequence of each type.
#include "tokenizer/pre_tokenizer.h"

#include <array>

#include "tokenizer/utf8.h"
#include "tokenizer/word_splitters.h"

namespace ridge {

namespace {

struct NamedPre {
  std::string_view name;
  PreTokenizerConfig config;
};

using T = PreTokenizerType;

// The names llama.cpp maps onto each regex set (only those whose encoding needs nothing else).
constexpr std::array kKnownPre = {
    NamedPre{"default", {T::kDefault}},
    NamedPre{"gpt-2", {T::kGpt2}},       NamedPre{"phi-2", {T::kGpt2}},      NamedPre{"mpt", {T::kGpt2}},
    NamedPre{"olmo", {T::kGpt2}},        NamedPre{"jais", {T::kGpt2}},       NamedPre{"roberta-bpe", {T::kGpt2}},
    NamedPre{"jina-es", {T::kGpt2}},     NamedPre{"jina-de", {T::kGpt2}},    NamedPre{"jina-v1-en", {T::kGpt2}},
    NamedPre{"jina-v2-es", {T::kGpt2}},  NamedPre{"jina-v2-de", {T::kGpt2}}, NamedPre{"jina-v2-code", {T::kGpt2}},
    NamedPre{"gigachat", {T::kGpt2}},    NamedPre{"exaone4", {T::kGpt2}},    NamedPre{"trillion", {T::kGpt2}},
    NamedPre{"llama3", {T::kLlama3, true, true}},    NamedPre{"llama-v3", {T::kLlama3, true, true}},
    NamedPre{"llama-bpe", {T::kLlama3, true, true}}, NamedPre{"falcon3", {T::kLlama3, true, true}},
    NamedPre{"pixtral", {T::kLlama3, true, true}},   NamedPre{"dbrx", {T::kLlama3}},
    NamedPre{"smaug-bpe", {T::kLlama3}},
    NamedPre{"qwen2", {T::kQwen2}},      NamedPre{"deepseek-r1-qwen", {T::kQwen2}}, NamedPre{"stablelm2", {T::kQwen2}},
    NamedPre{"megrez", {T::kQwen2}},     NamedPre{"hunyuan", {T::kQwen2}},
    NamedPre{"smollm", {T::kSmollm}},    NamedPre{"starcoder", {T::kSmollm}}, NamedPre{"refact", {T::kSmollm}},
    NamedPre{"command-r", {T::kSmollm}}, NamedPre{"codeshell", {T::kSmollm}}, NamedPre{"exaone", {T::kSmollm}},
    NamedPre{"minerva-7b", {T::kSmollm}},
};

}  // namespace

std::optional<PreTokenizerConfig> pre_tokenizer_for(std::string_view pre_name) {
  if (pre_name.empty()) return PreTokenizerConfig{};
  for (const auto& known : kKnownPre)
    if (known.name == pre_name) return known.config;
  return std::nullopt;
}

std::string_view pre_tokenizer_name(PreTokenizerType type) {
  switch (type) {
    case T::kDefault: return "default";
    case T::kGpt2: return "gpt2";
    case T::kLlama3: return "llama3";
    case T::kQwen2: return "qwen2";
    case T::kSmollm: return "smollm";
  }
  return "?";
}

std::vector<std::string> pre_tokenize(PreTokenizerType type, std::string_view text) {
  const std::vector<uint32_t> cpts = utf8::decode_all_lenient(text);
  if (cpts.empty()) return {};
  pretok::Chunks chunks = {cpts.size()};
  switch (type) {
    case T::kDefault:
      chunks = pretok::isolate(cpts, chunks, pretok::Isolate::kPunctuationRuns);
      chunks = pretok::split_gpt2(cpts, chunks);
      chunks = pretok::isolate(cpts, chunks, pretok::Isolate::kNumberRuns);
      chunks = pretok::isolate(cpts, chunks, pretok::Isolate::kAsciiDigitTriples);
      break;
    case T::kGpt2: chunks = pretok::split_gpt2(cpts, chunks); break;
    case T::kLlama3: chunks = pretok::split_llama3(cpts, chunks, 3); break;
    case T::kQwen2: chunks = pretok::split_llama3(cpts, chunks, 1); break;
    case T::kSmollm:
      chunks = pretok::isolate(cpts, chunks, pretok::Isolate::kEachNumber);
      chunks = pretok::split_gpt2(cpts, chunks);
      break;
  }
  std::vector<std::string> words;
  words.reserve(chunks.size());
  size_t start = 0;
  for (size_t len : chunks) {
    std::string& word = words.emplace_back();
    for (size_t i = start; i < start + len; ++i) utf8::append(word, cpts[i]);
    start += len;
  }
  return words;
}

}  // namespace ridge
