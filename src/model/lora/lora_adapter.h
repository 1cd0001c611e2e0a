#pragma once
// A LoRA adapter: for some of a decoder's matrices W (d_out x d_in), a low-rank addend
// scale * B * A (B: d_out x r, A: r x d_in) that each token of a request using the adapter adds to
// x * W^T as scale * (x * A^T) * B^T. Kept in f32 beside the base weights, whatever the base's type.
//
// Read from a PEFT directory (adapter_config.json + adapter_model.safetensors) or a GGUF LoRA file
// (llama.cpp's convert_lora_to_gguf.py); checked against the base model's shapes at load.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridge {
struct ModelSpec;
}

namespace ridge::lora {

enum class Target : uint8_t { kQ, kK, kV, kO, kGate, kUp, kDown };
constexpr int kTargets = 7;
std::string_view target_name(Target t);  // PEFT's module names: q_proj, ..., down_proj

struct LoraMatrix {
  int64_t rank = 0, d_in = 0, d_out = 0;
  // As read: A (rank, d_in) and B (d_out, rank), row-major. place_matrix moves them into the
  // transposed forms the addend is computed from (each token's sums run along a contiguous row).
  std::vector<float> a, b;
  std::vector<float> a_t;  // (d_in, rank)
  std::vector<float> b_t;  // (rank, d_out)
  // With LoraLoadOptions::f16: the same in f16 (a_t and b_t then empty).
  std::vector<uint16_t> a_t16, b_t16;
  float scale = 1.0f;      // alpha / rank (rsLoRA: alpha / sqrt(rank)) times the user's scale
};

struct LoraAdapter {
  std::string name;
  std::string source_format;  // "peft", "gguf"
  int64_t rank = 0;           // the largest of its matrices
  float alpha = 0;
  std::vector<std::array<std::optional<LoraMatrix>, kTargets>> layers;
  uint64_t id = 0;  // unique per loaded adapter: keys the prefix cache apart from the base

  const LoraMatrix* matrix(int64_t layer, Target t) const {
    if (layer < 0 || layer >= int64_t(layers.size())) return nullptr;
    const auto& m = layers[size_t(layer)][size_t(t)];
    return m ? &*m : nullptr;
  }
  int64_t bytes() const;
  int64_t n_matrices() const;
};

struct LoraLoadOptions {
  float scale = 1.0f;  // times alpha / rank (llama.cpp's --lora-scaled)
  // Keep A and B in f16 (half the bytes each step reads; llama.cpp's converter writes f16 by
  // default); false: f32 as read.
  bool f16 = true;
};

// A PEFT directory or a GGUF LoRA file, checked against `base` (which matrices exist and their
// shapes). Error naming the file and the tensor for anything wrong.
std::shared_ptr<const LoraAdapter> load_adapter(const std::string& path, const ModelSpec& base, const LoraLoadOptions& options = {});

// The readers behind load_adapter (lora_peft.cc, lora_gguf.cc); they fill `layers` and check shapes.
std::shared_ptr<LoraAdapter> read_peft_adapter(const std::string& dir, const ModelSpec& base, const LoraLoadOptions& options);
std::shared_ptr<LoraAdapter> read_gguf_adapter(const std::string& path, const ModelSpec& base, const LoraLoadOptions& options);

// Shared by the readers: places one (A, B) pair, after checking it against the base's shapes.
void place_matrix(LoraAdapter& adapter, const ModelSpec& base, int64_t layer, Target t, LoraMatrix m, const std::string& tensor);
// (d_out, d_in) of a target in `base`.
std::pair<int64_t, int64_t> target_shape(const ModelSpec& base, Target t);
// A finite, positive scale from alpha and rank; Error otherwise.
float lora_scale(double alpha, int64_t rank, bool rs_lora, float user_scale, const std::string& origin);

}  // namespace ridge::lora
