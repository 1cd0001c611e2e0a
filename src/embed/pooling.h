#pragma once
// From token states to one vector per text, as sentence-transformers' modules do it: pooling
// (mean, CLS, max, mean / sqrt(length), last token), Dense layers, L2 normalisation, and
// Matryoshka truncation to fewer dimensions.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ridge {

enum class PoolingMode { Mean, Cls, Max, MeanSqrtLen, LastToken };
std::string_view pooling_name(PoolingMode mode);
// llama.cpp's pooling types (a GGUF's <arch>.pooling_type): 1 mean, 2 cls (the first token), 3 last;
// Error for the others (none, rank).
PoolingMode pooling_from_llama_type(int64_t type);

// out (n_embd) from a text's token states (n_tokens, n_embd); the first `skip` tokens (a prompt the
// pooling leaves out) do not count, except for CLS, which is always token 0.
void pool_tokens(const float* states, int64_t n_tokens, int64_t n_embd, PoolingMode mode, int64_t skip, float* out);

// y = act(W x + b): a sentence-transformers Dense module (W: out x in, row-major f32).
struct DenseLayer {
  int64_t in = 0, out = 0;
  std::vector<float> weight;
  std::vector<float> bias;  // empty: none
  enum class Activation { Identity, Tanh, Sigmoid } activation = Activation::Identity;
  std::vector<float> apply(std::span<const float> x) const;
};

// x scaled to unit L2 length (left as it is when all zero).
void l2_normalize(std::span<float> x);

}  // namespace ridge
