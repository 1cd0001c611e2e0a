#pragma once
// EmbeddingGemma's tokenizer for the embedding pipeline: SentencePiece BPE from the directory's
// tokenizer.model (tokenizer/sentencepiece_model.h) through ridge's SPM encoder, with the special
// tokens tokenizer.json's post-processor puts around a text (<bos> ... <eos>).
#include <memory>
#include <string>

#include "embed/encoder.h"

namespace ridge {

// Error naming the file: no tokenizer.model, a malformed one, or a post-processor that adds
// anything but the model's BOS before and EOS after the text.
std::unique_ptr<EmbeddingTokenizer> load_gemma_tokenizer(const std::string& dir);

}  // namespace ridge
