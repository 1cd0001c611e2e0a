#include "model/kv_shape.h"

namespace ridge {

KvLayout kv_layout_of(const ModelSpec& s, int32_t block_size, int32_t n_blocks, KvDtype dtype) {
  if (s.is_mla()) return {s.n_layer, 1, s.kv_lora_rank + s.qk_rope_head_dim, block_size, n_blocks, dtype, true};
  return {s.n_layer, s.n_head_kv, s.head_dim, block_size, n_blocks, dtype, false};
}

bool kv_shape_matches(const ModelSpec& s, const KvLayout& layout) {
  const KvLayout want = kv_layout_of(s, layout.block_size, layout.n_blocks, layout.dtype);
  return layout.n_layer == want.n_layer && layout.n_kv_heads == want.n_kv_heads && layout.head_dim == want.head_dim &&
         layout.keys_only == want.keys_only;
}

}  // namespace ridge
