#pragma once
// Pre-tokenization: cut text into words before BPE merges, as the regex of the model's
// `tokenizer.ggml.pre` does. The regexes are hand-written matchers that reproduce llama.cpp's
// splits exactly (including where llama.cpp's own matchers differ from the textbook regex).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {

enum class PreTokenizerType {
  kDefault,  // llama.cpp's fallback: punctuation runs, GPT-2 words, digit runs, digit triples
  kGpt2,     // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
  kLlama3,   // case-insensitive contractions, [^\r\n\p{L}\p{N}]?\p{L}+, \p{N}{1,3}, newline-aware spaces
  kQwen2,    // as Llama 3 but single digits
  kSmollm,   // every digit alone, then GPT-2 (also starcoder, refact, command-r, ...)
};

struct PreTokenizerConfig {
  PreTokenizerType type = PreTokenizerType::kDefault;
  bool ignore_merges = false;  // a word that is itself a token is not merged (Llama 3)
  bool add_bos = false;        // default for add_bos when the file does not say
};

// Config for a `tokenizer.ggml.pre` value; nullopt when unsupported.
std::optional<PreTokenizerConfig> pre_tokenizer_for(std::string_view pre_name);
std::string_view pre_tokenizer_name(PreTokenizerType type);

// Words of `text` in order; their concatenation is `text` with invalid UTF-8 bytes replaced by U+FFFD.
std::vector<std::string> pre_tokenize(PreTokenizerType type, std::string_view text);

}  // namespace ridge
