#pragma once
// SentencePiece-style BPE (tokenizer.ggml.model = "llama"): spaces become U+2581 "▁", symbols
// are UTF-8 characters, and the adjacent pair whose merged text is the highest-scoring token
// merges first. Text no token covers falls back to <0xXX> byte tokens.
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace ridge {

// Append the ids of one raw-text fragment (spaces already escaped to ▁) to `out`.
void spm_encode(const Vocab& vocab, std::string_view escaped_text, std::vector<int32_t>& out);

// " " -> "▁" (and back).
std::string spm_escape_spaces(std::string_view text);
std::string spm_unescape_spaces(std::string_view text);
// Every occurrence of `from` (non-empty) replaced by `to`, left to right.
std::string replace_all(std::string_view text, std::string_view from, std::string_view to);

}  // namespace ridge
