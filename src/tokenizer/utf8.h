#pragma once
// UTF-8 helpers with the tokenizer's leniency rules. Text to tokenize may be any bytes:
// an invalid byte becomes one U+FFFD and decoding resumes at the next byte, exactly as
// llama.cpp does, so token ids agree even on broken input. Overlong forms and surrogates
// are decoded (not rejected), also as llama.cpp does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Length of the sequence a lead byte announces, judged by its high nibble alone (1..4).
size_t sequence_length(uint8_t lead);

// Decode one codepoint at `offset`, advancing it; invalid input yields U+FFFD and advances one byte.
uint32_t decode_lenient(std::string_view text, size_t& offset);
std::vector<uint32_t> decode_all_lenient(std::string_view text);

void append(std::string& out, uint32_t cpt);  // cpt <= U+10FFFF
std::string encode(uint32_t cpt);

// Length of the longest prefix of `bytes` that does not end inside an incomplete but so far
// valid sequence: what a streaming decoder may emit now.
size_t complete_prefix_length(std::string_view bytes);

// Replace every invalid sequence (strict UTF-8: no overlongs, surrogates or > U+10FFFF) by U+FFFD.
std::string sanitize(std::string_view bytes);

}  // namespace ridge::utf8
