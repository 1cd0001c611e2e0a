#pragma once
// `ridge synth`: a GGUF of random weights for a model shape, in a chosen weight type, with a valid
// tokenizer, loadable by ridge and llama.cpp. Written tensor by tensor in chunks of rows, so an
// 8B model never sits in memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "model/model_spec.h"

namespace ridge::synth {

struct SynthOptions {
  ModelSpec spec;                     // dense llama / mistral / qwen2 shapes
  DType type = DType::Q4_0;           // the layer matrices
  std::optional<DType> embd_type;     // token_embd; default: float types as `type`, else Q8_0
  std::optional<DType> output_type;   // output.weight when untied; default: float types and Q8_0 as
                                      // `type`, else Q6_K (as llama.cpp's quantizer does)
  uint64_t seed = 1;
  float stddev = 0.02f;               // of every matrix, so activations stay finite
};

// One tensor of the file: a weight matrix (random), a norm (ones), a bias (zeros) or
// Llama 3 RoPE frequency factors.
struct SynthTensor {
  enum class Fill { Random, Ones, Zeros, RopeFactors };
  std::string name;
  DType type;
  int64_t rows, cols;  // GGUF shape [cols, rows]; rows == 1 for vectors
  Fill fill;
};

// The tensors in file order, with each matrix's type resolved (K types fall back to Q5_0 / Q8_0
// for rows that are not a multiple of 256, as llama.cpp's quantizer does). Error on a shape ridge
// cannot synthesise (experts, latent attention) or a type without a random generator.
std::vector<SynthTensor> synth_tensors(const SynthOptions& options);

// Writes the model to `path` (directories created), showing progress on stderr.
void write_synth_model(const SynthOptions& options, const std::string& path);

}  // namespace ridge::synth
