#pragma once
// Cutting special-token text out of the input before the main tokenizer runs. Tokens are tried
// longest text first; each is cut out of every remaining stretch of raw text, left to right.
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace ridge {

struct Fragment {
  int32_t token = -1;  // >= 0: a special token; -1: raw text [offset, offset + length)
  size_t offset = 0, length = 0;
};

// With parse_special off, only user-defined tokens are cut out (control and unknown tokens stay
// text), as llama.cpp and Hugging Face tokenizers do.
std::vector<Fragment> partition_special(const Vocab& vocab, std::string_view text, bool parse_special);

}  // namespace ridge
