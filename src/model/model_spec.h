#pragma once
// The one description of a model's shapes. The engine builds its buffers from it and the
// planner counts bytes and FLOPs from it: both read the same numbers.
#include <cstdint>
#include <string>

namespace ridge {

// How RoPE pairs the dimensions of a head. Normal (GPT-J / GGUF llama): adjacent pairs (2i, 2i+1).
// NeoX (HF rotate_half, Qwen2 in GGUF): pairs (i, i + rot_dim/2).
enum class RopeStyle { Normal, NeoX };

struct RopeScaling {
  enum class Type { None, Linear, Llama3 };
  Type type = Type::None;
  float factor = 1.0f;             // Linear: positions divided by it; Llama3: low-frequency divisor
  float low_freq_factor = 1.0f;    // Llama3
  float high_freq_factor = 4.0f;   // Llama3
  int64_t original_context = 8192; // Llama3: context the base model was trained at
};

struct ModelSpec {
  std::string arch;  // "llama", "mistral", "qwen2"
  std::string name;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;     // hidden size H
  int64_t n_layer = 0;
  int64_t n_head = 0;     // query heads
  int64_t n_head_kv = 0;  // key/value heads (GQA when < n_head)
  int64_t head_dim = 0;
  int64_t n_ff = 0;       // SwiGLU intermediate size H'
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int64_t rope_dim = 0;   // rotated dimensions per head (== head_dim for Llama)
  RopeStyle rope_style = RopeStyle::Normal;
  RopeScaling rope_scaling;
  bool qkv_bias = false;         // Qwen2
  bool tied_embeddings = false;  // output projection reuses token_embd

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
  int64_t gqa_group() const { return n_head / n_head_kv; }
};

// Error when the shapes are inconsistent (zero sizes, heads that do not divide, ...).
void validate(const ModelSpec& spec);

}  // namespace ridge
