#pragma once
// A loaded embedding model's parts, as each family's loader makes them: the tokenizer, the encoder,
// the sentence-transformers pipeline (or the GGUF's pooling), and what keeps the weights alive.
#include <memory>
#include <string>

#include "embed/encoder.h"
#include "embed/st_pipeline.h"

namespace ridge {

struct EncoderParts {
  std::unique_ptr<EmbeddingTokenizer> tokenizer;
  std::unique_ptr<Encoder> encoder;
  EmbeddingPipeline pipeline;
  std::string name;
  std::shared_ptr<const void> weights;  // the encoder's model, kept for as long as the encoder
};

// BERT: a Hugging Face directory (config.json model_type "bert") or a GGUF "bert" file.
// dtype: embed/encoder_recode.h.
EncoderParts load_bert_family(const std::string& path, int n_threads, const std::string& dtype);
// Gemma 3 with bidirectional attention (EmbeddingGemma): a Hugging Face directory whose config.json
// has model_type "gemma3_text".
EncoderParts load_gemma_family(const std::string& path, int n_threads, const std::string& dtype);
// Any decoder GGUF ridge runs, causal, its final norm's states pooled as `pooling` says ("last",
// "mean", "cls"; "" for the file's <arch>.pooling_type), normalised. The matrices stay as stored.
EncoderParts load_decoder_family(const std::string& path, int n_threads, const std::string& pooling);

}  // namespace ridge
