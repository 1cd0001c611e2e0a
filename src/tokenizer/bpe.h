#pragma once
// Byte-level BPE (GPT-2 style): pre-tokenize, show each byte as its GPT-2 codepoint, then merge
// adjacent symbols by rank (earliest merge in tokenizer.ggml.merges first) within each word.
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace ridge {

// Append the ids of `text` (no special-token handling) to `out`.
void bpe_encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

// Merge one already byte-encoded word into token strings.
std::vector<std::string> bpe_merge_word(const Vocab& vocab, const std::string& word);

}  // namespace ridge
