#pragma once
// The grammar engine's view of a tokenizer's vocabulary: each token's bytes and the
// end-of-generation tokens, allowed once the grammar accepts. Control tokens never match grammar
// text; user-defined tokens (Qwen's <tool_call>) match their text, since the tokenizer turns that
// text into them even without special-token parsing (as llama.cpp does), so jump-forward and the
// model's own choice both produce them. Built once per tokenizer.
#include <memory>

#include "grammar/token_vocab.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

std::shared_ptr<const grammar::TokenVocab> grammar_vocab(const Tokenizer& tokenizer);

}  // namespace ridge
