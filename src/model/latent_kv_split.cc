#include "model/latent_kv_split.h"

namespace ridge {

void split_latent_kv_b(const float* kv_b, const ModelSpec& s, const std::function<float*(int64_t)>& storage, LayerWeights& w) {
  const int64_t rank = s.kv_lora_rank, nope = s.qk_nope_head_dim, v = s.v_head_dim;
  for (int64_t h = 0; h < s.n_head; ++h) {
    const float* head = kv_b + h * (nope + v) * rank;
    float* absorbed = storage(rank * nope);
    for (int64_t r = 0; r < rank; ++r)
      for (int64_t d = 0; d < nope; ++d) absorbed[r * nope + d] = head[d * rank + r];
    w.wk_b.push_back(WeightRef{DType::F32, absorbed, rank, nope});
    w.wv_b.push_back(WeightRef{DType::F32, head + nope * rank, v, rank});
  }
}

}  // namespace ridge
