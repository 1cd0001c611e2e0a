#pragma once
// `ridge synth`: a GGUF of random weights for a model shape, in a chosen weight type, with a valid
// tokenizer, loadable by ridge and llama.cpp. Written tensor by tensor in chunks of rows, so an
// 8B model never sits in memory.
//
// Every architecture is written with the metadata keys and the tensor names and shapes that
// llama.cpp's loader of that architecture reads (src/models/<arch>.cpp in llama.cpp): dense llama,
// mistral, qwen2, qwen3 and gemma3; experts in llama (Mixtral), qwen3moe, qwen2moe and olmoe; latent
// attention with experts in deepseek2.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/model_spec.h"

namespace ridge::synth {

struct SynthOptions {
  ModelSpec spec;                     // of one of synth_architectures()
  DType type = DType::Q4_0;           // the layer matrices
  std::optional<DType> embd_type;     // token_embd; default: float types as `type`, else Q8_0
  std::optional<DType> output_type;   // output.weight when untied; default: float types and Q8_0 as
                                      // `type`, else Q6_K (as llama.cpp's quantizer does)
  uint64_t seed = 1;
  float stddev = 0.02f;               // of every matrix, so activations stay finite
  // A GGUF whose tokenizer (every tokenizer.* key: vocabulary, merges, special tokens, chat
  // template) the file takes instead of the synthetic one; spec.n_vocab must be its token count.
  std::string vocab_from;
};

// The number of tokens of a GGUF's vocabulary (for SynthOptions::vocab_from).
int64_t vocab_size_of(const std::string& gguf_path);

// One tensor of the file: a weight matrix (random), a norm (ones), a bias (zeros) or
// Llama 3 RoPE frequency factors. Experts (and DeepSeek's per-head attn_k_b / attn_v_b) are
// n_mats matrices stacked in one 3-D tensor.
struct SynthTensor {
  enum class Fill { Random, Ones, Zeros, RopeFactors };
  std::string name;
  DType type;
  int64_t rows, cols;  // of one matrix; GGUF shape [cols, rows]; rows == 1 for vectors
  Fill fill;
  int64_t n_mats = 1;  // > 1: GGUF shape [cols, rows, n_mats]

  int64_t total_rows() const { return rows * n_mats; }
  std::vector<int64_t> gguf_shape() const;  // vectors are 1-D, as llama.cpp expects them
};

// The architectures synth_tensors can write.
const std::vector<std::string>& synth_architectures();

// Sets the fields that llama.cpp fixes for spec.arch (RoPE style, QK-norm, post norms, the FFN's
// activation, Gemma's embedding scale, biases, how chosen experts' weights are normalised, and
// for llama / olmoe experts n_ff = n_ff_expert, the width llama.cpp reads), so a shape given by
// flags or scaled down from a named one stays one llama.cpp computes the same way.
void apply_arch_conventions(ModelSpec& spec);

// The tensors in file order, with each matrix's type resolved (K types fall back to Q5_0 / Q8_0
// for rows that are not a multiple of 256, as llama.cpp's quantizer does). Error on an
// architecture not in synth_architectures(), a spec that contradicts what llama.cpp's loader of
// its architecture fixes, or a type without a random generator.
std::vector<SynthTensor> synth_tensors(const SynthOptions& options);

// Writes the model to `path` (directories created), showing progress on stderr.
void write_synth_model(const SynthOptions& options, const std::string& path);

}  // namespace ridge::synth
