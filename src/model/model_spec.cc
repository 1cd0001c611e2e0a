#include "model/model_spec.h"

#include "core/error.h"

namespace ridge {

void validate(const ModelSpec& s) {
  auto positive = [](int64_t value, const char* field) {
    if (value <= 0) fail("model spec: {} must be positive, got {}", field, value);
  };
  positive(s.n_vocab, "n_vocab");
  positive(s.n_embd, "n_embd");
  positive(s.n_layer, "n_layer");
  positive(s.n_head, "n_head");
  positive(s.n_head_kv, "n_head_kv");
  positive(s.head_dim, "head_dim");
  positive(s.n_ff, "n_ff");
  positive(s.n_ctx_train, "n_ctx_train");
  if (s.n_head % s.n_head_kv != 0) fail("model spec: n_head {} is not a multiple of n_head_kv {}", s.n_head, s.n_head_kv);
  if (s.rope_dim <= 0 || s.rope_dim > s.head_dim || s.rope_dim % 2 != 0)
    fail("model spec: rope_dim {} must be even and in (0, head_dim {}]", s.rope_dim, s.head_dim);
  if (!(s.rms_eps > 0.0f)) fail("model spec: rms_eps must be positive, got {}", s.rms_eps);
  if (!(s.rope_theta > 0.0f)) fail("model spec: rope_theta must be positive, got {}", s.rope_theta);
  if (s.rope_scaling.type != RopeScaling::Type::None && !(s.rope_scaling.factor > 0.0f))
    fail("model spec: rope scaling factor must be positive, got {}", s.rope_scaling.factor);
}

}  // namespace ridge
