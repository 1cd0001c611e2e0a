#include "model/model_identity.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/weights.h"

namespace ridge {

// FNV-1a over the model's shapes and the first and last bytes of its embedding and output matrices.
uint64_t model_identity(const Model& model) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= static_cast<const uint8_t*>(p)[i];
      h *= 1099511628211ULL;
    }
  };
  const ModelSpec& s = model.spec;
  for (int64_t v : {s.n_layer, s.n_embd, s.n_head, s.n_head_kv, s.head_dim, s.n_vocab, s.n_ff}) mix(&v, sizeof v);
  for (const WeightRef* w : {&model.weights.token_embd, &model.weights.output}) {
    if (!w->present()) continue;
    const auto bytes = size_t(w->rows * w->row_bytes());
    const size_t n = std::min<size_t>(bytes, 4096);
    mix(w->data, n);
    mix(static_cast<const uint8_t*>(w->data) + bytes - n, n);
  }
  return h;
}

std::string model_identity_hex(const Model& model) { return fmt::format("{:016x}", model_identity(model)); }

}  // namespace ridge
