#pragma once
// An embedding model as a user names it: a sentence-transformers / Hugging Face directory (BERT
// weights in safetensors, tokenizer.json, the pipeline of embed/st_pipeline.h) or a GGUF `bert` file
// (its pooling type from the metadata, vectors normalised as llama.cpp's server does). Texts go in,
// one vector per text comes out, the texts packed by length into passes of the encoder.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/encoder.h"
#include "embed/encoder_family.h"
#include "embed/st_pipeline.h"

namespace ridge {

// One text made ready for the encoder: its ids (specials included), type ids (empty: all 0), and
// how many leading tokens the pooling leaves out (a prompt, when the pipeline says so).
struct EmbeddingInput {
  std::vector<int32_t> ids;
  std::vector<int32_t> types;
  int64_t skip = 0;
};

class EmbeddingModel {
 public:
  // A directory whose config.json is a BERT model or that has modules.json, or a GGUF whose
  // architecture is "bert" or that names a pooling type (a decoder converted for embeddings).
  // Cheap: reads only the config or the GGUF header.
  static bool is_embedding_model(const std::string& path);
  // Error naming what is missing or unsupported. n_threads <= 0: one per core. dtype: the layer
  // matrices re-encoded at load (embed/encoder_recode.h: "f32" keeps the file's values; "auto":
  // resolve_embedding_dtype).
  // pooling: "" (the model's own), or "last" / "mean" / "cls" to embed with a decoder GGUF that names
  // none (embed/decoder_family.cc).
  static std::unique_ptr<EmbeddingModel> load(const std::string& path, int n_threads = 0, const std::string& dtype = "auto",
                                              const std::string& pooling = "");
  const std::string& dtype() const { return dtype_; }  // what "auto" became

  const std::string& name() const { return parts_.name; }
  const EncoderShape& shape() const { return parts_.encoder->shape(); }
  const EmbeddingPipeline& pipeline() const { return parts_.pipeline; }
  const EmbeddingTokenizer& tokenizer() const { return *parts_.tokenizer; }
  int64_t dimensions() const { return parts_.pipeline.output_dim(shape().n_embd); }
  int64_t max_tokens() const;  // the longest text, specials included (max_seq_length, else positions)
  Encoder& encoder() { return *parts_.encoder; }

  // prompt_name: "" for none (the pipeline's default prompt applies when it has one). A text longer
  // than max_tokens() is cut to it when `truncate`, else an Error saying how long it is.
  EmbeddingInput prepare(std::string_view text, const std::string& prompt_name, bool truncate) const;
  // Token ids as given (no specials added); Error for an id outside the vocabulary.
  EmbeddingInput prepare_ids(std::vector<int32_t> ids, bool truncate) const;
  // A (query, document) pair for a cross-encoder: [CLS] q [SEP] d [SEP] with type ids.
  EmbeddingInput prepare_pair(std::string_view query, std::string_view document) const;

  // out becomes (inputs.size(), dimensions()): pooled, through the Dense layers, normalised as the
  // pipeline says. Inputs are packed by length into passes of at most max_batch_tokens tokens;
  // progress(done) after each pass. A text's vector does not depend on what it was packed with.
  void embed(std::span<const EmbeddingInput> inputs, std::vector<float>& out,
             const std::function<void(int64_t done)>& progress = {});
  int64_t max_batch_tokens = 16384;
  int64_t max_batch_texts = 0;  // > 0: at most this many texts in one pass
  // Texts are cut to n tokens from now on (up to the model's positions), as sentence-transformers'
  // max_seq_length setter does. Error outside 2..positions.
  void set_max_tokens(int64_t n);

 private:
  EmbeddingModel(EncoderParts parts, std::string dtype) : parts_(std::move(parts)), dtype_(std::move(dtype)) {}
  EncoderParts parts_;
  std::string dtype_;
  std::vector<float> hidden_;
};

// "auto" becomes "bf16" where the AMX BF16 tiles run the matrices (a cosine of 0.9999 or more to the
// f32 vectors on the real models, at several times the speed), else "f32"; other names stay.
std::string resolve_embedding_dtype(const std::string& dtype);

// The first `dims` values of v (Matryoshka), renormalised when `normalize`. Error when dims exceeds
// the vector's length or is not positive.
std::vector<float> truncate_dimensions(std::span<const float> v, int64_t dims, bool normalize);

}  // namespace ridge
