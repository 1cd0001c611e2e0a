#include "model/model_spec.h"

#include <cmath>

#include "core/error.h"

namespace ridge {
namespace {

// Defaults (all zero) mean a dense model; otherwise the expert shapes must be complete.
void validate_moe(const ModelSpec& s) {
  if (s.n_expert < 0 || s.n_expert_used < 0 || s.n_shared_expert < 0 || s.n_ff_expert < 0 || s.n_layer_dense_lead < 0)
    fail("model spec: expert counts and sizes must not be negative");
  if (s.n_expert == 0) {
    if (s.n_expert_used != 0 || s.n_shared_expert != 0)
      fail("model spec: n_expert_used / n_shared_expert set on a dense model (n_expert 0)");
    return;
  }
  if (s.n_expert_used <= 0 || s.n_expert_used > s.n_expert)
    fail("model spec: n_expert_used {} must be in [1, n_expert {}]", s.n_expert_used, s.n_expert);
  if (s.n_ff_expert <= 0) fail("model spec: n_ff_expert must be positive on a MoE model, got {}", s.n_ff_expert);
  if (s.n_layer_dense_lead > s.n_layer)
    fail("model spec: n_layer_dense_lead {} exceeds n_layer {}", s.n_layer_dense_lead, s.n_layer);
  if (s.n_expert_groups > 1 &&
      (s.n_expert % s.n_expert_groups != 0 || s.n_expert / s.n_expert_groups < 2 || s.n_group_used <= 0 ||
       s.n_group_used >= s.n_expert_groups || s.n_group_used * (s.n_expert / s.n_expert_groups) < s.n_expert_used))
    fail("model spec: {} experts in {} groups, {} groups used, cannot route {} experts per token", s.n_expert,
         s.n_expert_groups, s.n_group_used, s.n_expert_used);
}

// Defaults (all zero) mean ordinary attention; MLA needs its latent and per-head sizes.
void validate_mla(const ModelSpec& s) {
  if (s.kv_lora_rank < 0 || s.q_lora_rank < 0 || s.qk_rope_head_dim < 0 || s.qk_nope_head_dim < 0 || s.v_head_dim < 0)
    fail("model spec: MLA sizes must not be negative");
  if (s.kv_lora_rank == 0) return;
  if (s.qk_rope_head_dim <= 0 || s.qk_nope_head_dim <= 0 || s.v_head_dim <= 0)
    fail("model spec: MLA needs positive qk_rope_head_dim, qk_nope_head_dim and v_head_dim");
}

}  // namespace

float ModelSpec::scores_scale() const {
  if (attention_scale > 0.0f) return attention_scale;
  const int64_t dim = is_mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim;
  return 1.0f / std::sqrt(float(dim));
}

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
  if (s.head_dim > 512) fail("model spec: head_dim {} is larger than the 512 ridge supports", s.head_dim);
  if (s.n_head % s.n_head_kv != 0) fail("model spec: n_head {} is not a multiple of n_head_kv {}", s.n_head, s.n_head_kv);
  if (s.rope_dim <= 0 || s.rope_dim > s.head_dim || s.rope_dim % 2 != 0)
    fail("model spec: rope_dim {} must be even and in (0, head_dim {}]", s.rope_dim, s.head_dim);
  if (!(s.rms_eps > 0.0f)) fail("model spec: rms_eps must be positive, got {}", s.rms_eps);
  if (!(s.rope_theta > 0.0f)) fail("model spec: rope_theta must be positive, got {}", s.rope_theta);
  if (s.rope_scaling.type != RopeScaling::Type::None && !(s.rope_scaling.factor > 0.0f))
    fail("model spec: rope scaling factor must be positive, got {}", s.rope_scaling.factor);
  if (s.sliding_window < 0 || s.swa_pattern < 0) fail("model spec: sliding_window and swa_pattern must not be negative");
  if (s.final_logit_softcap < 0.0f) fail("model spec: final_logit_softcap must not be negative");
  validate_moe(s);
  validate_mla(s);
}

}  // namespace ridge
