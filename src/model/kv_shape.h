#pragma once
// What a model keeps per position and layer in the KV store: n_head_kv heads of head_dim keys and
// values, or, for multi-head latent attention, one keys-only row of the kv_lora_rank latent and
// the qk_rope_head_dim RoPE key that every head shares. The forward pass, its cache and the
// engine's memory plan all take the shape from here.
#include <cstdint>

#include "kv/kv_store.h"
#include "model/model_spec.h"

namespace ridge {

KvLayout kv_layout_of(const ModelSpec& spec, int32_t block_size, int32_t n_blocks, KvDtype dtype);

// The store was made for this model (its layer count, heads, widths and keys-only flag).
bool kv_shape_matches(const ModelSpec& spec, const KvLayout& layout);

}  // namespace ridge
