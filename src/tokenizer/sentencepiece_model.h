#pragma once
// SentencePiece's own model file (tokenizer.model, a protobuf ModelProto) read into ridge's Vocab,
// so the SPM path of tokenizer.h encodes with it as llama.cpp does for a GGUF's "llama"
// vocabulary. Read: the pieces (text, score, type), the trainer spec's model type and special ids,
// the normalizer spec's whitespace rules. Refused with an Error naming the problem: a malformed or
// truncated file, an empty or duplicate piece, an unknown piece type, a special id outside the
// vocabulary, a Unigram (or word / char) model, a normalizer ridge does not apply.
#include <cstdint>
#include <span>
#include <string>

#include "tokenizer/vocab.h"

namespace ridge {

// add_bos / add_eos stay false: the model file does not say; the caller sets them (a
// tokenizer.json's post-processor, a GGUF's flags).
Vocab parse_sentencepiece_model(std::span<const uint8_t> bytes, const std::string& origin = "tokenizer.model");
Vocab load_sentencepiece_model(const std::string& path);

}  // namespace ridge
