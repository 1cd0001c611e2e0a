#pragma once
// DeepSeek's kv_b projection (n_head x [nope key rows; value rows], each of kv_lora_rank values, in
// f32) split into the per-head matrices latent attention runs: the key rows transposed into their
// absorbed form (kv_lora_rank, nope), the value rows (v_head_dim, kv_lora_rank) viewed in place.
// Used for HF checkpoints' kv_b_proj and older GGUF files' attn_kv_b.
#include <functional>

#include "model/weights.h"

namespace ridge {

// `storage(n)` returns new f32 storage of n values that lives as long as the model.
void split_latent_kv_b(const float* kv_b, const ModelSpec& s, const std::function<float*(int64_t)>& storage, LayerWeights& w);

}  // namespace ridge
