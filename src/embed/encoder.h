#pragma once
// What the embedding pipeline (embed/embedding_model.h) needs from a model family: its tokenizer
// and its encoder pass over packed texts. One implementation per family (BERT: embed/bert_*;
// bidirectional Gemma 3: embed/gemma_*), chosen at load by the checkpoint's config.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/encoder_batch.h"

namespace ridge {

class EmbeddingTokenizer {
 public:
  virtual ~EmbeddingTokenizer() = default;
  // The text's ids with the model's special tokens (BERT: [CLS] .. [SEP]; Gemma: <bos> .. <eos>)
  // when add_special; the text's pieces cut so that the whole is at most max_tokens (0: no limit).
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special, int64_t max_tokens = 0) const = 0;
  // A pair for a cross-encoder, with type ids; Error for a family that has no pairs.
  virtual void encode_pair(std::string_view a, std::string_view b, int64_t max_tokens, std::vector<int32_t>& ids,
                           std::vector<int32_t>& type_ids) const = 0;
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  virtual int32_t n_vocab() const = 0;
  virtual std::string token_text(int32_t id) const = 0;  // Error for an id outside the vocabulary
};

struct EncoderShape {
  std::string arch;  // "bert", "gemma3"
  int64_t n_vocab = 0, n_embd = 0, n_layer = 0;
  int64_t n_positions = 0;  // the longest text
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual const EncoderShape& shape() const = 0;
  // hidden becomes (batch.tokens.size(), n_embd): the last layer's output of every token, each text
  // attending only to itself. Error on an id outside the vocabulary or a text past n_positions.
  virtual void forward(const EncoderBatch& batch, std::vector<float>& hidden) = 0;
  virtual double flops(const EncoderBatch& batch) const = 0;  // matmuls and attention of one pass
  virtual int n_threads() const = 0;
};

}  // namespace ridge
