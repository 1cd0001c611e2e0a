#pragma once
// The grammar engine's view of a tokenizer's vocabulary: each token's bytes (control and
// user-defined tokens never match grammar text) and the end-of-generation tokens, allowed once the
// grammar accepts. Built once per tokenizer.
#include <memory>

#include "grammar/token_vocab.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

std::shared_ptr<const grammar::TokenVocab> grammar_vocab(const Tokenizer& tokenizer);

}  // namespace ridge
